//go:build linux

// Package vpcslab runs real vpcs processes on 127.0.0.1 as test devices:
// each in its own directory, linked in pairs over UDP, kept on loopback by
// an LD_PRELOAD bind shim, and stopped by PID with SIGTERM when the test ends.
package vpcslab

import (
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/childproc"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/procfs"
)

//go:embed shim/bindlo.c
var shimSource string

// Node is one running vpcs instance.
type Node struct {
	Index int
	// Name is the pcname set by the startup file ("PC1", ...), or "VPCS"
	// when the lab was started without names.
	Name        string
	ConsolePort int
	// UDPPort is the node's UDP link port; the vpcs relay socket sits at
	// UDPPort+9, which is why blocks are 10 ports wide.
	UDPPort  int
	PeerPort int
	// Peer is the index of the node linked to this one, or -1.
	Peer int
	Dir  string
	PID  int

	cmd      *exec.Cmd
	exited   <-chan struct{}
	childPID int
}

// Addr is the console address, "127.0.0.1:port".
func (n *Node) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.ConsolePort)) }

// Options change how a lab is started.
type Options struct {
	// NoNames leaves the default "VPCS> " prompt instead of naming nodes PC1..PCn.
	NoNames bool
	// Startup returns extra startup-file lines for node i (e.g. an "ip" command).
	Startup func(i int) string
	// NoClamp runs vpcs with its stock 100 µs timer spin (about a tenth of a
	// core per idle instance); only useful to measure that cost.
	NoClamp bool
}

// Lab is a set of running vpcs nodes. Nodes 2k and 2k+1 are linked.
type Lab struct {
	Nodes []*Node
	tb    testing.TB
	// vpcs and shim start a node again (Restart).
	vpcs, shim string
}

// Require returns the paths of vpcs and gcc. Without them the test is
// skipped, unless CI=true, where a missing tool is a failure.
func Require(tb testing.TB) (vpcs, gcc string) {
	tb.Helper()
	var missing []string
	vpcs, err := exec.LookPath("vpcs")
	if err != nil {
		missing = append(missing, "vpcs")
	}
	gcc, err = exec.LookPath("gcc")
	if err != nil {
		missing = append(missing, "gcc")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("real-device test needs %s on PATH (apt-get install -y vpcs gcc)", strings.Join(missing, " and "))
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg + "; skipping")
	}
	return vpcs, gcc
}

// Start runs n linked vpcs nodes named PC1..PCn.
func Start(tb testing.TB, n int) *Lab {
	tb.Helper()
	return StartWith(tb, n, Options{})
}

// StartWith runs n vpcs nodes with options. Every node's console accepts
// connections when it returns; t.Cleanup stops them all.
func StartWith(tb testing.TB, n int, opts Options) *Lab {
	tb.Helper()
	if n <= 0 {
		tb.Fatalf("vpcslab: need at least one node, got %d", n)
	}
	vpcs, gcc := Require(tb)
	root := tb.TempDir()
	shim := filepath.Join(root, "bindlo.so")
	buildShim(tb, gcc, root, shim, !opts.NoClamp)

	lab := &Lab{tb: tb, vpcs: vpcs, shim: shim}
	tb.Cleanup(lab.stop)
	blocks := reserveBlocks(tb, n)
	for i := 0; i < n; i++ {
		node := &Node{Index: i, Name: "VPCS", Peer: -1}
		if !opts.NoNames {
			node.Name = fmt.Sprintf("PC%d", i+1)
		}
		if i^1 < n {
			node.Peer = i ^ 1
		}
		node.Dir = filepath.Join(root, fmt.Sprintf("node%d", i+1))
		if err := os.MkdirAll(node.Dir, 0o755); err != nil {
			tb.Fatalf("vpcslab: %v", err)
		}
		var script strings.Builder
		if !opts.NoNames {
			fmt.Fprintf(&script, "set pcname %s\n", node.Name)
		}
		if opts.Startup != nil {
			script.WriteString(opts.Startup(i))
			script.WriteString("\n")
		}
		if script.Len() > 0 {
			if err := os.WriteFile(filepath.Join(node.Dir, "startup.vpc"), []byte(script.String()), 0o644); err != nil {
				tb.Fatalf("vpcslab: %v", err)
			}
		}
		lab.Nodes = append(lab.Nodes, node)
	}
	// Ports are assigned after all nodes exist so that a pair knows both sides.
	for i, node := range lab.Nodes {
		node.ConsolePort = blocks[i]
		node.UDPPort = blocks[i]
	}
	for _, node := range lab.Nodes {
		if node.Peer >= 0 {
			node.PeerPort = lab.Nodes[node.Peer].UDPPort
		} else {
			node.PeerPort = node.UDPPort + 1 // nobody listens there: an unplugged cable
		}
	}

	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, node := range lab.Nodes {
		if err := lab.launch(vpcs, shim, node); err != nil {
			tb.Fatalf("vpcslab: start %s: %v", node.Name, err)
		}
		wg.Add(1)
		go func(i int, node *Node) {
			defer wg.Done()
			errs[i] = node.waitReady(10 * time.Second)
		}(i, node)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatalf("vpcslab: %v", err)
	}
	return lab
}

func buildShim(tb testing.TB, gcc, dir, out string, clamp bool) {
	tb.Helper()
	src := filepath.Join(dir, "bindlo.c")
	if err := os.WriteFile(src, []byte(shimSource), 0o644); err != nil {
		tb.Fatalf("vpcslab: %v", err)
	}
	args := []string{"-O2", "-shared", "-fPIC", "-o", out, src, "-ldl"}
	if clamp {
		args = append([]string{"-DCLAMP_USLEEP"}, args...)
	}
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		tb.Fatalf("vpcslab: building the bind shim: %v\n%s", err, b)
	}
}

func (l *Lab) launch(vpcs, shim string, n *Node) error {
	args := []string{
		"-p", strconv.Itoa(n.ConsolePort),
		"-m", strconv.Itoa(n.Index + 1),
		"-i", "1",
		"-F", // stay in the foreground: a forked daemon could not be stopped by PID
		"-s", strconv.Itoa(n.UDPPort),
		"-c", strconv.Itoa(n.PeerPort),
		"-t", "127.0.0.1",
	}
	if _, err := os.Stat(filepath.Join(n.Dir, "startup.vpc")); err == nil {
		args = append(args, "startup.vpc")
	}
	logf, err := os.Create(filepath.Join(n.Dir, "vpcs.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(vpcs, args...)
	cmd.Dir = n.Dir
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+shim)
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies, the daemon still gets SIGTERM and takes
	// its pty child down with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	exited, err := childproc.Start(cmd)
	if err != nil {
		return err
	}
	n.cmd, n.PID, n.exited = cmd, cmd.Process.Pid, exited
	return nil
}

// waitReady waits until the console accepts a connection and answers with
// telnet negotiation, and the pty child holds the node's UDP link and relay
// ports (vpcs does not fail when they are taken; it just never links).
func (n *Node) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-n.exited:
			log, _ := os.ReadFile(filepath.Join(n.Dir, "vpcs.log"))
			return fmt.Errorf("%s (pid %d) exited during start: %s", n.Name, n.PID, strings.TrimSpace(string(log)))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: console %s not ready within %s", n.Name, n.Addr(), timeout)
		}
		if n.consoleAnswers() {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		if child := childOf(n.PID); child > 0 {
			n.childPID = child
			if ownsUDP(child, n.UDPPort) && ownsUDP(child, n.UDPPort+9) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: UDP ports %d and %d (relay) are not held by vpcs (pid %d, child %d); port clash?",
				n.Name, n.UDPPort, n.UDPPort+9, n.PID, n.childPID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (n *Node) consoleAnswers() bool {
	c, err := net.DialTimeout("tcp", n.Addr(), 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	b := make([]byte, 64)
	k, _ := c.Read(b)
	return k > 0 && b[0] == 0xff
}

// stop sends SIGTERM to every daemon (never SIGKILL, which would orphan
// the pty child with its ports and a spinning CPU) and checks that both
// processes of each node are gone.
func (l *Lab) stop() {
	for _, n := range l.Nodes {
		if n.cmd != nil && n.cmd.Process != nil {
			_ = n.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, n := range l.Nodes {
		if n.cmd == nil {
			continue
		}
		select {
		case <-n.exited:
		case <-time.After(5 * time.Second):
			l.tb.Errorf("vpcslab: %s (pid %d) did not exit within 5s of SIGTERM", n.Name, n.PID)
			continue
		}
		if n.childPID > 0 && !waitGone(n.childPID, 3*time.Second) {
			l.tb.Errorf("vpcslab: pty child %d of %s survived its daemon; sending it SIGTERM", n.childPID, n.Name)
			_ = syscall.Kill(n.childPID, syscall.SIGTERM)
		}
		releaseBlock(n.UDPPort)
	}
}

// Stop stops one node now (to test a device going away).
func (l *Lab) Stop(i int) {
	n := l.Nodes[i]
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(5 * time.Second):
		l.tb.Errorf("vpcslab: %s (pid %d) did not exit within 5s of SIGTERM", n.Name, n.PID)
	}
}

// Restart stops node i and starts it again, as GNS3 does when a node is stopped and started:
// a new vpcs that replays the startup.vpc in its directory (what "save" wrote).
func (l *Lab) Restart(i int) {
	l.tb.Helper()
	n := l.Nodes[i]
	l.Stop(i)
	if n.childPID > 0 && !waitGone(n.childPID, 3*time.Second) {
		l.tb.Fatalf("vpcslab: pty child %d of %s survived its daemon", n.childPID, n.Name)
	}
	n.childPID = 0
	if err := l.launch(l.vpcs, l.shim, n); err != nil {
		l.tb.Fatalf("vpcslab: start %s again: %v", n.Name, err)
	}
	if err := n.waitReady(10 * time.Second); err != nil {
		l.tb.Fatalf("vpcslab: %v", err)
	}
}

// Pair returns the two nodes of link k (nodes 2k and 2k+1).
func (l *Lab) Pair(k int) (*Node, *Node) { return l.Nodes[2*k], l.Nodes[2*k+1] }

// ---- ports -------------------------------------------------------------

var (
	portMu   sync.Mutex
	usedBase = map[int]bool{}
)

// Blocks live below the usual ephemeral range so outgoing connections do
// not take them between the probe and vpcs binding them.
const (
	portLow  = 20000
	portHigh = 32000
)

// reserveBlocks finds n free 10-port blocks: TCP console on the base,
// UDP link on the base, the vpcs relay on base+9.
func reserveBlocks(tb testing.TB, n int) []int {
	portMu.Lock()
	defer portMu.Unlock()
	var out []int
	for tries := 0; len(out) < n; tries++ {
		if tries > 20000 {
			tb.Fatalf("vpcslab: no free port blocks between %d and %d", portLow, portHigh)
		}
		base := portLow + 10*rand.IntN((portHigh-portLow)/10)
		if usedBase[base] || !blockFree(base) {
			continue
		}
		usedBase[base] = true
		out = append(out, base)
	}
	return out
}

func releaseBlock(base int) {
	portMu.Lock()
	delete(usedBase, base)
	portMu.Unlock()
}

func blockFree(base int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base)))
	if err != nil {
		return false
	}
	defer l.Close()
	for _, p := range []int{base, base + 9} {
		u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return false
		}
		u.Close()
	}
	return true
}

// ---- /proc -------------------------------------------------------------

// childOf finds the pty child vpcs forks for the real simulator.
func childOf(pid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procfs.ReadStat(cpid); ok && st.PPID == pid {
			return cpid
		}
	}
	return 0
}

// waitGone waits until pid no longer runs; a zombie left to an init that
// does not reap counts as gone.
func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if !procfs.Alive(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ownsUDP reports whether pid holds a UDP socket bound to 127.0.0.1:port.
func ownsUDP(pid, port int) bool {
	b, err := os.ReadFile("/proc/net/udp")
	if err != nil {
		return false
	}
	want := fmt.Sprintf("0100007F:%04X", port)
	inode := ""
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == want {
			inode = f[9]
			break
		}
	}
	if inode == "" {
		return false
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == "socket:["+inode+"]" {
			return true
		}
	}
	return false
}
