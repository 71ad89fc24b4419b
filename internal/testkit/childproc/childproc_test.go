package childproc_test

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/childproc"
)

func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	cmd := exec.Command(sleep, "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	return cmd
}

// retireThreads ends n OS threads the way temporaldev's supervisor does: a goroutine that
// locked its thread returns.
func retireThreads(n int) {
	for range n {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(done)
		}()
		<-done
	}
}

// The mechanism: a child forked on a thread that then ends gets its parent-death signal while
// the test binary lives on.
func TestAChildForkedOnAThreadThatEndsIsSignalled(t *testing.T) {
	cmd := sleeper(t)
	started := make(chan error)
	for forked := false; !forked; {
		go func() {
			runtime.LockOSThread()
			// The main thread is never ended (the runtime parks it instead): fork elsewhere.
			if syscall.Gettid() == syscall.Getpid() {
				started <- nil
				return
			}
			forked = true
			started <- cmd.Start()
		}()
		if err := <-started; err != nil {
			t.Fatal(err)
		}
	}
	state := make(chan *exec.ExitError, 1)
	go func() {
		err, _ := cmd.Wait().(*exec.ExitError)
		state <- err
	}()
	select {
	case ee := <-state:
		if ee == nil || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Fatalf("the child ended without SIGTERM: %v", ee)
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the child outlived the thread that forked it")
	}
}

// A child started with Start outlives any number of ended threads, and its channel closes once
// it is gone.
func TestStartKeepsTheForkingThreadUntilTheChildIsGone(t *testing.T) {
	cmd := sleeper(t)
	exited, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	retireThreads(200)
	runtime.GC()
	// A signal takes effect at once; give the kernel a moment to deliver one, if any came.
	select {
	case <-exited:
		t.Fatalf("the child died while the test binary lived on: %v", cmd.ProcessState)
	case <-time.After(200 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("exited was not closed after the child ended")
	}
}
