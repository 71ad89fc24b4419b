package memtrim

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// DropIdleCodePages unmaps the pages of this process's own executable that are mapped read-only
// and were never written (its code and read-only data), so that only what the process runs
// afterwards comes back. Both binaries are large (serve: the Temporal SDK, gin, GORM, SQLite; the
// dev server: the whole Temporal server) and starting one runs every package's initialisation
// spread over all of its code, and the kernel maps the neighbouring pages of every page touched
// (fault-around): a started serve had about 60 MB of its binary resident, the Temporal CLI's dev
// server 72 MB, most of it never used again. The pages stay in the page cache, where the
// kernel can reclaim them; a page needed again is a minor fault. Writable mappings, and read-only
// ones with a written page (the dynamic linker's RELRO), are left alone. It returns the bytes
// that were resident in the mappings it dropped.
//
// Measured in the load command with the binary copied into place (as a package installs it):
// serve idle 74 against 82 MB, after a burst of 100 turns 113 against 128 MB (its binary's part
// 38 against 47 MB). A binary that `go build` has just written maps more either way (59 MB):
// how much of a file one touch maps depends on how its pages came into the page cache.
func DropIdleCodePages() int64 {
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		return 0
	}
	path, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0
	}
	raw, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	type mapping struct {
		start, end uintptr
		rss        int64
		candidate  bool
	}
	var (
		maps []mapping
		cur  *mapping
	)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			// A mapping's header: range, perms, offset, device, inode[, path].
			lo, hi, _ := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			ino, err3 := strconv.ParseUint(f[4], 10, 64)
			maps = append(maps, mapping{start: uintptr(start), end: uintptr(end),
				candidate: err1 == nil && err2 == nil && err3 == nil && ino == exe.Ino && len(f) >= 6 && strings.Join(f[5:], " ") == path && f[1][0] == 'r' && f[1][1] == '-' && f[1][3] == 'p'})
			cur = &maps[len(maps)-1]
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			cur.rss = kb << 10
		case "Anonymous:":
			if kb != 0 {
				cur.candidate = false // a written page: its content exists nowhere else
			}
		}
	}
	var dropped int64
	for _, m := range maps {
		if !m.candidate || m.rss == 0 {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno == 0 {
			dropped += m.rss
		}
	}
	return dropped
}

// DeclineHugePages declines transparent huge pages for this process and every child it
// starts later (the Temporal dev server): the setting is inherited across fork and exec. On a
// host whose transparent_hugepage setting is "always", Go heaps and mapped files are otherwise
// backed by 2 MB pages, which a process of this size does not fill; with "madvise" (the usual
// default) it changes nothing, as Go asks for none.
func DeclineHugePages() error {
	return unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0)
}
