package devices_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeios"
)

func iosTarget(t *testing.T, srv *fakeios.Server, id string) devices.Target {
	t.Helper()
	host, port, err := net.SplitHostPort(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return devices.Target{NodeID: id, Name: id, NodeType: "dynamips", Tags: []string{"device_type:cisco_ios"},
		ConsoleType: "telnet", ConsoleHost: host, ConsolePort: p}
}

// Issue 25: a job may fan out to every device, but the process holds no more consoles open than
// its limit. With both consoles of a limit of two in use, a third device waits (and never
// connects) until one is closed.
func TestUseOpensNoMoreConsolesThanTheLimit(t *testing.T) {
	limit := devices.NewConsoleLimit(2)
	opts := devices.Options{Consoles: limit}
	locker := devices.NewMemoryLocker(time.Minute)
	var servers []*fakeios.Server
	for i := range 3 {
		servers = append(servers, fakeios.Start(t, fakeios.Options{Hostname: fmt.Sprintf("R%d", i+1)}))
	}

	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	done := make(chan error, 2)
	for i := range 2 {
		target := iosTarget(t, servers[i], fmt.Sprintf("r%d", i))
		go func() {
			done <- devices.Use(context.Background(), locker, target, "127.0.0.1", opts, func(*devices.Session) error {
				entered <- struct{}{}
				<-release
				return nil
			})
		}()
	}
	<-entered
	<-entered
	if got := limit.Open(); got != 2 {
		t.Fatalf("open consoles = %d, want 2", got)
	}

	third := iosTarget(t, servers[2], "r2")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := devices.Use(ctx, locker, third, "127.0.0.1", opts, func(*devices.Session) error {
		t.Error("a third console was opened while two were open under a limit of two")
		return nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third device: err = %v, want a wait that ends with its context", err)
	}
	if lines := servers[2].Lines(); len(lines) != 0 {
		t.Fatalf("the third console received %q while waiting for a free console", lines)
	}

	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got := limit.Open(); got != 0 {
		t.Fatalf("open consoles after use = %d, want 0", got)
	}
	ran := false
	if err := devices.Use(context.Background(), locker, third, "127.0.0.1", opts, func(s *devices.Session) error {
		ran = s.Profile() != nil
		return nil
	}); err != nil || !ran {
		t.Fatalf("third device once consoles were free: ran=%v err=%v", ran, err)
	}
}

func TestConsoleLimitZeroIsUnbounded(t *testing.T) {
	if l := devices.NewConsoleLimit(0); l != nil {
		t.Fatalf("NewConsoleLimit(0) = %v, want nil (no limit)", l)
	}
	var none *devices.ConsoleLimit
	for range 3 {
		release, err := none.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer release()
	}
	if none.Open() != 0 || none.Max() != 0 {
		t.Fatalf("a nil limit reports %d open of %d", none.Open(), none.Max())
	}
}

func TestConsoleLimitReleaseTwiceFreesOneSlot(t *testing.T) {
	l := devices.NewConsoleLimit(2)
	r1, _ := l.Acquire(context.Background())
	r2, _ := l.Acquire(context.Background())
	r1()
	r1()
	if got := l.Open(); got != 1 {
		t.Fatalf("open after releasing one console twice = %d, want 1", got)
	}
	r2()
}
