package devices_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

func openVPCS(t testing.TB, n *vpcslab.Node, p *devices.Profile, opts devices.Options) *devices.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := devices.Open(ctx, n.Addr(), p, opts)
	if err != nil {
		t.Fatalf("open %s: %v", n.Name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustProfile(t testing.TB, name string) *devices.Profile {
	t.Helper()
	p, err := devices.ProfileByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRun(t testing.TB, s *devices.Session, cmd string) devices.CommandResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := s.Run(ctx, cmd)
	if err != nil {
		t.Fatalf("%s: run %q: %v", s.Addr(), cmd, err)
	}
	return r
}

func TestVPCSLinkedPair(t *testing.T) {
	lab := vpcslab.Start(t, 4)
	sessions := make([]*devices.Session, len(lab.Nodes))
	for i, n := range lab.Nodes {
		// The platform is detected from the "PC1> " prompt.
		sessions[i] = openVPCS(t, n, nil, devices.Options{})
		if got := sessions[i].Profile().Name; got != "vpcs" {
			t.Fatalf("%s detected as %s", n.Name, got)
		}
		if got := sessions[i].Prompt(); got != n.Name+">" {
			t.Fatalf("%s prompt %q", n.Name, got)
		}
	}

	// "ip" takes ~3 s (duplicate address check); set all four at once.
	var wg sync.WaitGroup
	results := make([]devices.CommandResult, len(sessions))
	for i, s := range sessions {
		wg.Add(1)
		go func(i int, s *devices.Session) {
			defer wg.Done()
			subnet := i / 2
			results[i] = mustRun(t, s, fmt.Sprintf("ip 10.0.%d.%d/24 10.0.%d.254", subnet, i%2+1, subnet))
		}(i, s)
	}
	wg.Wait()
	for i, r := range results {
		want := fmt.Sprintf("PC1 : 10.0.%d.%d 255.255.255.0 gateway 10.0.%d.254", i/2, i%2+1, i/2)
		if r.Failed || !strings.HasSuffix(r.Output, want) || !strings.HasPrefix(r.Output, "Checking for duplicate address...") {
			t.Fatalf("%s ip: %+v", lab.Nodes[i].Name, r)
		}
	}

	r := mustRun(t, sessions[0], "show ip")
	if !strings.Contains(r.Output, "IP/MASK     : 10.0.0.1/24") || !strings.HasPrefix(r.Output, "NAME        : PC1[1]") {
		t.Fatalf("show ip:\n%s", r.Output)
	}
	if n := strings.Count(r.Output, "\n"); n != 7 {
		t.Fatalf("show ip has %d lines:\n%s", n+1, r.Output)
	}

	r = mustRun(t, sessions[0], "ping 10.0.0.2 -c 2")
	if r.Failed || !strings.Contains(r.Output, "10.0.0.2 icmp_seq=1 ttl=64") || !strings.Contains(r.Output, "icmp_seq=2") {
		t.Fatalf("ping across the pair: %+v", r)
	}
	r = mustRun(t, sessions[3], "ping 10.0.1.1 -c 1")
	if r.Failed || !strings.Contains(r.Output, "10.0.1.1 icmp_seq=1") {
		t.Fatalf("ping across the second pair: %+v", r)
	}

	r = mustRun(t, sessions[1], "foo")
	if !r.Failed || r.Error != `Bad command: "foo". Use ? for help.` {
		t.Fatalf("bad command: %+v", r)
	}
	// An address already used on the link is refused by the device.
	r = mustRun(t, sessions[1], "ip 10.0.0.1/24")
	if !r.Failed || !strings.Contains(r.Output, "Address not changed") {
		t.Fatalf("duplicate address: %+v", r)
	}
}

func TestVPCSDoubleEchoTolerance(t *testing.T) {
	lab := vpcslab.Start(t, 1)
	s := openVPCS(t, lab.Nodes[0], mustProfile(t, "vpcs"), devices.Options{})
	// Alternating with empty lines makes the readline echo race frequent
	// (about 1 in 12 in vpcs-lab.md).
	for i := 0; i < 300; i++ {
		r := mustRun(t, s, "show ip")
		if !strings.HasPrefix(r.Output, "NAME        : PC1[1]") || strings.Count(r.Output, "\n") != 7 || r.Failed {
			t.Fatalf("iteration %d: %q", i, r.Output)
		}
		if r := mustRun(t, s, ""); r.Output != "" || r.Failed {
			t.Fatalf("empty line %d: %+v", i, r)
		}
	}
	t.Logf("stats after 600 commands: %+v", s.Stats())
}

func TestVPCSTimeoutInterrupt(t *testing.T) {
	lab := vpcslab.Start(t, 2)
	a := openVPCS(t, lab.Nodes[0], nil, devices.Options{})
	b := openVPCS(t, lab.Nodes[1], nil, devices.Options{})
	var wg sync.WaitGroup
	for i, s := range []*devices.Session{a, b} {
		wg.Add(1)
		go func(i int, s *devices.Session) {
			defer wg.Done()
			mustRun(t, s, fmt.Sprintf("ip 10.9.0.%d/24", i+1))
		}(i, s)
	}
	wg.Wait()
	start := time.Now()
	r, err := a.RunCommand(context.Background(), devices.Command{Text: "ping 10.9.0.2 -c 30", Timeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !r.TimedOut || !strings.Contains(r.Output, "icmp_seq=1") {
		t.Fatalf("%+v", r)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("interrupt took %s", el)
	}
	if r := mustRun(t, a, "show ip"); !strings.Contains(r.Output, "10.9.0.1/24") {
		t.Fatalf("after interrupt: %+v", r)
	}
}

func TestVPCSConsoleBusy(t *testing.T) {
	lab := vpcslab.Start(t, 1)
	holder := openVPCS(t, lab.Nodes[0], nil, devices.Options{})
	_, err := devices.Open(context.Background(), lab.Nodes[0].Addr(), nil,
		devices.Options{WakeTimeout: 150 * time.Millisecond, WakeAttempts: 2})
	if !errors.Is(err, devices.ErrConsoleBusy) {
		t.Fatalf("second client: want ErrConsoleBusy, got %v", err)
	}
	if r := mustRun(t, holder, "show ip"); r.Failed {
		t.Fatalf("holder: %+v", r)
	}
}

func TestVPCSConnectFromTarget(t *testing.T) {
	lab := vpcslab.StartWith(t, 1, vpcslab.Options{NoNames: true})
	n := lab.Nodes[0]
	ctx := context.Background()
	s, err := devices.Connect(ctx, devices.Target{
		NodeID: "n1", Name: "VPCS-1", NodeType: "vpcs", ConsoleType: "telnet", ConsoleHost: "0.0.0.0", ConsolePort: n.ConsolePort,
	}, "127.0.0.1", devices.Options{Policy: devices.DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Prompt() != "VPCS>" {
		t.Fatalf("prompt %q", s.Prompt())
	}
	// VPCS has no configuration mode: Configure runs the lines.
	res, err := s.Configure(ctx, []string{"set pcname Web1"})
	if err != nil || len(res) != 1 || res[0].Failed || res[0].Prompt != "Web1>" {
		t.Fatalf("%+v %v", res, err)
	}
	// "quit" would stop the node: refused, and the node keeps answering.
	for _, cmd := range []string{"quit", "q", "trace 10.0.0.1", "!ls"} {
		if r := mustRun(t, s, cmd); !r.Blocked {
			t.Fatalf("%q not blocked: %+v", cmd, r)
		}
	}
	if r := mustRun(t, s, "show ip"); !strings.HasPrefix(r.Output, "NAME        : Web1[1]") {
		t.Fatalf("%+v", r)
	}
}

// writers is the scenario of TestVPCSUseSerialisesWriters: n callers of Use on one VPCS, each
// of which holds the console until every other caller is either waiting for the device lock or
// done. Without mutual exclusion the others meet a console that vpcs, serving one client at a
// time, leaves silent: they fail busy while the holder holds it.
type writers struct {
	mu      sync.Mutex
	changed *sync.Cond
	n       int
	waiting int // callers inside Locker.Lock
	done    int // callers whose Use returned
	inside  int // callers inside Use's fn
	most    int // the most callers ever inside fn at once
}

func (w *writers) update(f func()) {
	w.mu.Lock()
	f()
	w.mu.Unlock()
	w.changed.Broadcast()
}

// counting wraps a Locker to count the callers waiting in Lock.
type counting struct {
	devices.Locker
	w *writers
}

func (c counting) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	c.w.update(func() { c.w.waiting++ })
	defer c.w.update(func() { c.w.waiting-- })
	return c.Locker.Lock(ctx, key, ttl)
}

// noExclusion is a Locker whose lock excludes nobody: the control of the lock test.
type noExclusion struct{}

func (noExclusion) Lock(context.Context, string, time.Duration) (func(), error) {
	return func() {}, nil
}

// run has the n writers rename the PC through Use with locker, and returns each one's error.
func (w *writers) run(t *testing.T, locker devices.Locker, target devices.Target) []error {
	w.changed = sync.NewCond(&w.mu)
	var wg sync.WaitGroup
	errs := make([]error, w.n)
	// A console that says nothing is busy after 500 ms instead of 2 s, so the control is quick.
	opts := devices.Options{BusyTimeout: 500 * time.Millisecond, WakeTimeout: 250 * time.Millisecond, WakeAttempts: 2}
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.update(func() { w.done++ })
			errs[i] = devices.Use(context.Background(), counting{locker, w}, target, "", opts, func(s *devices.Session) error {
				w.update(func() { w.inside++; w.most = max(w.most, w.inside) })
				defer w.update(func() { w.inside-- })
				w.mu.Lock()
				for w.waiting+w.done < w.n-1 {
					w.changed.Wait()
				}
				w.mu.Unlock()
				r, err := s.Run(context.Background(), fmt.Sprintf("set pcname W%d", i))
				if err == nil && r.Failed {
					err = errors.New(r.Error)
				}
				return err
			})
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		t.Fatal("the writers did not finish within 60s")
	}
	return errs
}

func TestVPCSUseSerialisesWriters(t *testing.T) {
	lab := vpcslab.Start(t, 1)
	n := lab.Nodes[0]
	target := devices.Target{NodeID: "pc1", Name: n.Name, NodeType: "vpcs", ConsoleType: "telnet", ConsoleHost: "127.0.0.1", ConsolePort: n.ConsolePort}

	t.Run("with the device lock", func(t *testing.T) {
		w := &writers{n: 4}
		if err := errors.Join(w.run(t, devices.NewMemoryLocker(30*time.Second), target)...); err != nil {
			t.Fatal(err)
		}
		if w.most != 1 {
			t.Fatalf("%d writers were on the console at once", w.most)
		}
	})

	// The same scenario through a lock that excludes nobody: the writers meet on the console and
	// all but one fail busy, which is what the lock above prevents.
	t.Run("control: without exclusion", func(t *testing.T) {
		w := &writers{n: 4}
		var busy, ok int
		for _, err := range w.run(t, noExclusion{}, target) {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, devices.ErrConsoleBusy):
				busy++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		if ok != 1 || busy != 3 {
			t.Fatalf("without exclusion: %d writers succeeded and %d found the console busy; want 1 and 3", ok, busy)
		}
	})
}
