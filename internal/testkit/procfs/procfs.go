// Package procfs reads what the tests need to know of a process from Linux's /proc: its state,
// parent and CPU time (stat) and its resident memory (status). It is the one reader of those
// files in the tests; elsewhere than Linux every read reports that nothing was found.
package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stat is what /proc/<pid>/stat says of a process.
type Stat struct {
	// State is the state letter: R running, S sleeping, T stopped, Z zombie, …
	State byte
	PPID  int
	// CPUSeconds is the user and system time the process has used.
	CPUSeconds float64
	// StartTicks is when the process started, in clock ticks after boot: with the PID, it names
	// one process even after the PID is reused.
	StartTicks uint64
}

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc on every architecture Go supports.
const clockTicks = 100

// ReadStat reads /proc/<pid>/stat; ok is false when the process does not exist (or its file
// cannot be read or parsed).
func ReadStat(pid int) (st Stat, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, false
	}
	return parseStat(string(b))
}

func parseStat(s string) (Stat, bool) {
	// The command name may hold spaces and parentheses; the fields start after the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "" {
		return Stat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseFloat(f[11], 64)
	stime, err3 := strconv.ParseFloat(f[12], 64)
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return Stat{}, false
	}
	return Stat{State: f[0][0], PPID: ppid, CPUSeconds: (utime + stime) / clockTicks, StartTicks: start}, true
}

// Alive reports whether pid runs. A zombie (or a process caught dying, X) counts as gone: a
// child reparented to a PID 1 that does not reap would otherwise look alive forever.
func Alive(pid int) bool {
	st, ok := ReadStat(pid)
	return ok && st.State != 'Z' && st.State != 'X'
}

// Memory is a process's resident memory, from /proc/<pid>/status, in bytes.
type Memory struct {
	RSS  int64 // VmRSS
	Anon int64 // RssAnon: heap, stacks
	File int64 // RssFile: mapped files, the binary's code among them
	Peak int64 // VmHWM: the resident set's high-water mark
}

// ReadMemory reads /proc/<pid>/status; ok is false when the process does not exist or the file
// names no resident set.
func ReadMemory(pid int) (m Memory, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, false
	}
	return parseStatus(string(b))
}

func parseStatus(s string) (Memory, bool) {
	var m Memory
	for _, line := range strings.Split(s, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "VmRSS":
			m.RSS = kb << 10
		case "RssAnon":
			m.Anon = kb << 10
		case "RssFile":
			m.File = kb << 10
		case "VmHWM":
			m.Peak = kb << 10
		}
	}
	return m, m.RSS > 0
}
