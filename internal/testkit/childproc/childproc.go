// Package childproc starts the test kit's long-lived child processes (VPCS, FRR's daemons and
// consoles) so that their parent-death signal means what it says: the test binary is gone.
package childproc

import (
	"os/exec"
	"runtime"
)

// Start starts cmd, whose SysProcAttr asks for a parent-death signal, and returns a channel
// that is closed once the child has exited and been reaped.
//
// Linux sends that signal when the thread that forked the child exits, not the process. The Go
// runtime ends a thread whenever a goroutine that locked it returns (temporaldev's supervisor
// does that each time a dev server stops), and any earlier goroutine may have forked a child on
// that thread: the child then dies in the middle of a test for no reason of its own. So the
// child is forked on a goroutine locked to its thread, which stays until the child is gone.
func Start(cmd *exec.Cmd) (exited <-chan struct{}, err error) {
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		// The thread stays locked: when this goroutine returns, the runtime ends the thread,
		// which by then has no child left to signal.
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}
