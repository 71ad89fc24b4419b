package temporaldev

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultLockWait bounds how long LockDataDir waits for whatever still uses a
// data directory: a dev server left by a crashed parent shuts down gracefully
// in a few seconds once the kernel tells it its parent died.
const DefaultLockWait = 30 * time.Second

// PIDFileName records the running dev server, so that a later start can tell
// a leftover of this data directory from any other process.
const PIDFileName = "temporal-dev.pid"

// lockPoll is how often a waiting LockDataDir retries the lock.
const lockPoll = 50 * time.Millisecond

// leftoverGrace is how long a leftover dev server gets to exit after SIGTERM
// before SIGKILL (a variable for tests).
var leftoverGrace = stopGrace

// Lock is the exclusive hold on a data directory. The dev server inherits
// it (Start passes the descriptor to the child), so the kernel releases it
// only once this process and its dev server are both gone: a new process can
// never open the databases while a dying one still writes them.
type Lock struct {
	f    *os.File
	dir  string
	once sync.Once
}

// Dir is the locked data directory (absolute).
func (l *Lock) Dir() string { return l.dir }

// Release drops this process's hold; a dev server started with the lock keeps
// it until it exits. Safe to call more than once.
func (l *Lock) Release() { l.once.Do(func() { l.f.Close() }) }

// LockOptions tunes LockDataDir.
type LockOptions struct {
	// Wait bounds the wait for a holder to let go (default DefaultLockWait).
	Wait time.Duration
	// Logger receives the one line saying what is waited for.
	Logger *slog.Logger
}

// LockDataDir takes the data directory's lock. When another process holds
// it, it says so in one line and waits up to opts.Wait. If the holder is
// still there after the wait and is a dev server left by a parent that has
// died (its PID, start time and command line match PIDFileName), it is
// stopped by its PID; nothing else is ever signalled. A live process using
// the directory makes it fail with an error naming that process.
func LockDataDir(ctx context.Context, dataDir string, opts LockOptions) (*Lock, error) {
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: data dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("temporaldev: create data dir: %w", err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	wait := opts.Wait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: open lock %s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	got, err := tryLock(f)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: lock %s: %w", path, err)
	}
	if !got {
		logger.Warn(fmt.Sprintf("waiting up to %s for %s to let go of data directory %s", wait, describeHolder(dir), dir))
		began := time.Now()
		if got, err = pollLock(ctx, f, wait); err != nil {
			return nil, err
		}
		if !got {
			if rec, ok := leftoverChild(dir); ok {
				logger.Warn("stopping the Temporal dev server left by a previous run", "pid", rec.PID, "data_dir", dir, "waited", time.Since(began).Round(time.Millisecond))
				if got, err = stopLeftover(ctx, f, rec); err != nil {
					return nil, err
				}
			}
		}
		if !got {
			return nil, fmt.Errorf("temporaldev: data directory %s is still in use by %s after waiting %s; stop it or choose another data directory", dir, describeHolder(dir), wait)
		}
		logger.Info("data directory is free", "data_dir", dir, "waited", time.Since(began).Round(time.Millisecond))
	}
	// Who holds the lock, for the message of the next process that finds it held.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(fmt.Appendf(nil, "%d %d\n", os.Getpid(), procStartOrZero(os.Getpid())), 0)
	}
	ok = true
	return &Lock{f: f, dir: dir}, nil
}

func pollLock(ctx context.Context, f *os.File, wait time.Duration) (bool, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("temporaldev: waiting for the data directory lock: %w", ctx.Err())
		case <-deadline.C:
			return tryLock(f)
		case <-tick.C:
			if got, err := tryLock(f); got || err != nil {
				return got, err
			}
		}
	}
}

// stopLeftover sends SIGTERM to a leftover dev server, then SIGKILL if it has
// not let go of the lock within the grace period. Its identity is checked
// again right before each signal, so a PID reused meanwhile is never touched.
func stopLeftover(ctx context.Context, f *os.File, rec childRecord) (bool, error) {
	for _, step := range []struct {
		kill bool
		wait time.Duration
	}{{false, leftoverGrace}, {true, killWait}} {
		if !rec.matches() {
			return pollLock(ctx, f, killWait)
		}
		if err := signalPID(rec.PID, step.kill); err != nil && !processGone(err) {
			return false, fmt.Errorf("temporaldev: stopping leftover dev server %d: %w", rec.PID, err)
		}
		got, err := pollLock(ctx, f, step.wait)
		if got || err != nil {
			return got, err
		}
	}
	return false, nil
}

// childRecord is PIDFileName's content: the dev server and the process that
// started it, each identified by PID and start time so a reused PID never
// matches.
type childRecord struct {
	PID        int      `json:"pid"`
	Start      uint64   `json:"start"`
	Args       []string `json:"args"`
	OwnerPID   int      `json:"owner_pid"`
	OwnerStart uint64   `json:"owner_start"`
}

func writeChildRecord(dir string, pid int, args []string) error {
	rec := childRecord{PID: pid, Start: procStartOrZero(pid), Args: args, OwnerPID: os.Getpid(), OwnerStart: procStartOrZero(os.Getpid())}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, PIDFileName+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, PIDFileName))
}

// removeChildRecord removes the record only if it still describes pid: a
// later start may already have written its own.
func removeChildRecord(dir string, pid int) {
	path := filepath.Join(dir, PIDFileName)
	if rec, err := readChildRecord(path); err == nil && rec.PID == pid {
		_ = os.Remove(path)
	}
}

func readChildRecord(path string) (childRecord, error) {
	var rec childRecord
	b, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	err = json.Unmarshal(b, &rec)
	return rec, err
}

// matches says whether the recorded dev server is still running: same PID,
// same start time, same command line.
func (r childRecord) matches() bool {
	if r.PID <= 0 || r.Start == 0 {
		return false
	}
	start, err := procStart(r.PID)
	if err != nil || start != r.Start {
		return false
	}
	args, err := procArgs(r.PID)
	return err == nil && slices.Equal(args, r.Args)
}

func (r childRecord) ownerAlive() bool {
	start, err := procStart(r.OwnerPID)
	return err == nil && start == r.OwnerStart
}

// leftoverChild returns the recorded dev server if it still runs and the
// process that started it does not.
func leftoverChild(dir string) (childRecord, bool) {
	rec, err := readChildRecord(filepath.Join(dir, PIDFileName))
	if err != nil || !rec.matches() || rec.ownerAlive() {
		return childRecord{}, false
	}
	return rec, true
}

// describeHolder names what holds the lock, as far as our own records tell.
func describeHolder(dir string) string {
	if rec, err := readChildRecord(filepath.Join(dir, PIDFileName)); err == nil && rec.matches() {
		if rec.ownerAlive() {
			return fmt.Sprintf("the gns3-copilot process %d and its Temporal dev server (pid %d)", rec.OwnerPID, rec.PID)
		}
		return fmt.Sprintf("the Temporal dev server (pid %d) left by a previous run that ended", rec.PID)
	}
	if b, err := os.ReadFile(filepath.Join(dir, lockName)); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			pid, _ := strconv.Atoi(f[0])
			start, _ := strconv.ParseUint(f[1], 10, 64)
			if s, err := procStart(pid); err == nil && pid > 0 && (start == 0 || s == start) {
				return fmt.Sprintf("the process %d that uses it", pid)
			}
		}
	}
	return "the process that still uses it"
}

func procStartOrZero(pid int) uint64 {
	s, _ := procStart(pid)
	return s
}

var errNoProc = errors.New("process information unavailable on this system")
