//go:build linux

// Package frrlab runs real FRRouting routers as test devices: each router in a network
// namespace of its own, joined to its neighbours by veth pairs, running zebra, staticd and
// ospfd (and bgpd or others where a test asks), with its vtysh console on a 127.0.0.1 telnet port that behaves like the serial console
// of GNS3's FRR appliance (one shared session, nothing shown until Enter, "exit" at the top of
// vtysh drops to a root shell where "vtysh" returns). Everything stays in namespaces the lab
// made and on loopback; the test's cleanup stops every process it started by its PID and
// deletes the namespaces by the names it gave them.
package frrlab

import (
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
)

// DaemonDir is where Debian's frr package installs the routing daemons.
const DaemonDir = "/usr/lib/frr"

// Daemons are the FRR daemons every router runs.
var Daemons = []string{"zebra", "staticd", "ospfd"}

// Router is one running FRR router.
type Router struct {
	// Name is the router's name in the lab, "R1", "R2", …; its vtysh hostname starts as "frr",
	// as on a fresh appliance.
	Name      string
	Namespace string
	// Interfaces are the router's veth ends, eth0, eth1, … in the order of the lab's links.
	Interfaces []string
	// ConsolePort is the telnet port of its console on 127.0.0.1.
	ConsolePort int
	Dir         string

	daemonNames []string
	daemons     []*exec.Cmd
	exited      []<-chan struct{}
	console     *console
}

// Addr is the console address, "127.0.0.1:port".
func (r *Router) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.ConsolePort)) }

// Link joins interfaces of two routers (indexes into Lab.Routers).
type Link struct{ A, B int }

// Options shape a lab.
type Options struct {
	// Routers is how many routers to run (default 2).
	Routers int
	// Hosts is how many Linux hosts to run beside them (default none).
	Hosts int
	// Links join them, routers by their index and hosts after them (host k+1 is index
	// Routers+k); by default router 2k and 2k+1 are linked, and host k+1 to router k+1 (modulo
	// the routers).
	Links []Link
	// ExtraDaemons run after Daemons on every router, e.g. "bgpd".
	ExtraDaemons []string
	// Login, when set, has every host's console ask for this user name and password before it
	// gives the shell, as a Linux VM's getty does.
	Login *Login
}

// Login is a user name and password a host's console asks for.
type Login struct{ User, Password string }

// Lab is a set of running FRR routers and Linux hosts.
type Lab struct {
	Routers []*Router
	Hosts   []*Host

	tb         testing.TB
	namespaces []string
}

// Require returns the paths of ip and vtysh once it has checked that the lab can run here:
// Linux, root, iproute2, bash, ping and FRR's daemons. Without them the test is skipped,
// unless CI=true, where anything missing is a failure.
func Require(tb testing.TB, extra ...string) (ipPath, vtyshPath string) {
	tb.Helper()
	var missing []string
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
		}
		return p
	}
	ipPath, vtyshPath = look("ip"), look("vtysh")
	look("bash")
	look("ping")
	for _, d := range append(Daemons, extra...) {
		if _, err := os.Stat(filepath.Join(DaemonDir, d)); err != nil {
			missing = append(missing, filepath.Join(DaemonDir, d))
		}
	}
	var msg string
	switch {
	case os.Geteuid() != 0:
		msg = "real-FRR tests run routers in network namespaces, which needs root"
	case len(missing) > 0:
		msg = fmt.Sprintf("real-FRR tests need %s (apt-get install -y frr iproute2 iputils-ping)", strings.Join(missing, ", "))
	}
	if msg != "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg + "; skipping")
	}
	return ipPath, vtyshPath
}

// Start runs a lab. Every router's daemons are up and its console answers when it returns;
// tb.Cleanup takes it all down.
func Start(tb testing.TB, opts Options) *Lab {
	tb.Helper()
	ip, vtysh := Require(tb, opts.ExtraDaemons...)
	opts = opts.withDefaults()
	// Not tb.TempDir: its parent is private to root, and the daemons run as the frr user.
	root, err := os.MkdirTemp("", "frrlab-")
	if err == nil {
		err = os.Chmod(root, 0o755)
	}
	if err != nil {
		tb.Fatalf("frrlab: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	lab := &Lab{tb: tb}
	tb.Cleanup(lab.stop) // before the directory goes: cleanups run last first
	lab.addMembers(ip, root, opts)
	lab.link(ip, opts)
	if err := lab.boot(ip, vtysh, opts.Login); err != nil {
		tb.Fatalf("frrlab: %v", err)
	}
	return lab
}

// withDefaults fills in two routers and, by default, router 2k linked to 2k+1 and host k+1 to
// router k+1 (modulo the routers).
func (o Options) withDefaults() Options {
	if o.Routers <= 0 {
		o.Routers = 2
	}
	if o.Links == nil {
		for k := 0; 2*k+1 < o.Routers; k++ {
			o.Links = append(o.Links, Link{A: 2 * k, B: 2*k + 1})
		}
		for k := 0; k < o.Hosts; k++ {
			o.Links = append(o.Links, Link{A: o.Routers + k, B: k % o.Routers})
		}
	}
	return o
}

// addMembers makes the routers' and hosts' namespaces and directories.
func (l *Lab) addMembers(ip, root string, opts Options) {
	tb := l.tb
	tb.Helper()
	// A prefix of this process and a random tag keeps parallel test binaries apart, and
	// names every namespace this lab may delete.
	prefix := fmt.Sprintf("gc-frr-%d-%04x", os.Getpid(), rand.IntN(0x10000))
	for i := 0; i < opts.Routers; i++ {
		r := &Router{Name: fmt.Sprintf("R%d", i+1), Namespace: fmt.Sprintf("%s-r%d", prefix, i+1), Dir: filepath.Join(root, fmt.Sprintf("r%d", i+1)),
			daemonNames: append(append([]string(nil), Daemons...), opts.ExtraDaemons...)}
		if err := os.Mkdir(r.Dir, 0o777); err != nil {
			tb.Fatalf("frrlab: %v", err)
		}
		_ = os.Chmod(r.Dir, 0o777) // past the umask: frr writes its pid and sockets here
		l.addNamespace(ip, r.Namespace)
		l.Routers = append(l.Routers, r)
	}
	for i := 0; i < opts.Hosts; i++ {
		h := &Host{Name: fmt.Sprintf("host%d", i+1), Namespace: fmt.Sprintf("%s-h%d", prefix, i+1), Dir: filepath.Join(root, fmt.Sprintf("h%d", i+1))}
		if err := os.Mkdir(h.Dir, 0o755); err != nil {
			tb.Fatalf("frrlab: %v", err)
		}
		l.addNamespace(ip, h.Namespace)
		l.Hosts = append(l.Hosts, h)
	}
}

// link joins the members by veth pairs as opts.Links says, each member by its index: the
// routers, then the hosts.
func (l *Lab) link(ip string, opts Options) {
	tb := l.tb
	tb.Helper()
	type member struct {
		ns  string
		ifs *[]string
	}
	var members []member
	for _, r := range l.Routers {
		members = append(members, member{r.Namespace, &r.Interfaces})
	}
	for _, h := range l.Hosts {
		members = append(members, member{h.Namespace, &h.Interfaces})
	}
	for _, lk := range opts.Links {
		if lk.A < 0 || lk.B < 0 || lk.A >= len(members) || lk.B >= len(members) || lk.A == lk.B {
			tb.Fatalf("frrlab: bad link %+v for %d routers and %d hosts", lk, opts.Routers, opts.Hosts)
		}
		a, b := members[lk.A], members[lk.B]
		ia, ib := fmt.Sprintf("eth%d", len(*a.ifs)), fmt.Sprintf("eth%d", len(*b.ifs))
		// Both ends are made inside their namespaces: the host's own links are never touched.
		if err := run(ip, "link", "add", ia, "netns", a.ns, "type", "veth", "peer", "name", ib, "netns", b.ns); err != nil {
			tb.Fatalf("frrlab: %v", err)
		}
		*a.ifs, *b.ifs = append(*a.ifs, ia), append(*b.ifs, ib)
		for _, end := range []struct{ ns, dev string }{{a.ns, ia}, {b.ns, ib}} {
			if err := run(ip, "-n", end.ns, "link", "set", end.dev, "up"); err != nil {
				tb.Fatalf("frrlab: %v", err)
			}
		}
	}
}

// boot starts every router's daemons and console and every host's shell, all at once.
func (l *Lab) boot(ip, vtysh string, login *Login) error {
	var wg sync.WaitGroup
	errs := make([]error, len(l.Routers)+len(l.Hosts))
	for i, r := range l.Routers {
		wg.Go(func() { errs[i] = r.start(ip, vtysh) })
	}
	for i, h := range l.Hosts {
		wg.Go(func() { errs[len(l.Routers)+i] = h.start(ip, login) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// addNamespace makes a network namespace with its loopback up, for the lab to delete when it ends.
func (l *Lab) addNamespace(ip, ns string) {
	l.tb.Helper()
	if err := run(ip, "netns", "add", ns); err != nil {
		l.tb.Fatalf("frrlab: %v", err)
	}
	l.namespaces = append(l.namespaces, ns)
	if err := run(ip, "-n", ns, "link", "set", "lo", "up"); err != nil {
		l.tb.Fatalf("frrlab: %v", err)
	}
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// start runs the router's daemons in its namespace, on a machine named "frr" as a fresh
// appliance is, and opens its console.
func (r *Router) start(ip, vtysh string) error {
	conf := filepath.Join(r.Dir, "frr.conf")
	for _, f := range []string{conf, filepath.Join(r.Dir, "vtysh.conf")} {
		if err := os.WriteFile(f, nil, 0o666); err != nil {
			return err
		}
	}
	for _, d := range r.daemonNames {
		logf, err := os.Create(filepath.Join(r.Dir, d+".out"))
		if err != nil {
			return err
		}
		// Foreground daemons (no -d), so the PID we hold is the daemon's: "ip netns exec"
		// execs it after entering the namespace. No TCP vty (-P 0): vtysh talks over the
		// sockets in the router's directory.
		// Each daemon takes its hostname from the system's, so it runs where the machine is
		// called "frr", as the appliance is (a UTS namespace: the host keeps its name); "sh -c
		// exec" keeps the PID the daemon's.
		daemon := strings.Join([]string{filepath.Join(DaemonDir, d), "-u frr -g frr -P 0",
			"--vty_socket", r.Dir, "-z", filepath.Join(r.Dir, "zserv.api"),
			"-i", filepath.Join(r.Dir, d+".pid"), "-f", conf, "--log", "file:" + filepath.Join(r.Dir, d+".log")}, " ")
		cmd := exec.Command(ip, "netns", "exec", r.Namespace, "unshare", "--uts", "--", "sh", "-c", "hostname frr && exec "+daemon)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		exited, err := childproc.Start(cmd)
		logf.Close()
		if err != nil {
			return fmt.Errorf("%s: start %s: %w", r.Name, d, err)
		}
		r.daemons, r.exited = append(r.daemons, cmd), append(r.exited, exited)
		// zebra first: the others connect to its socket when they start.
		if err := r.waitFile(d+".vty", exited, 10*time.Second); err != nil {
			return err
		}
	}
	vt := []string{vtysh, "--vty_socket", r.Dir, "--config_dir", r.Dir}
	// The console: a root shell that starts vtysh, as the appliance's autologin does; "exit"
	// at the top of vtysh lands in the shell, and "vtysh" there returns.
	rc := filepath.Join(r.Dir, "consolerc")
	script := fmt.Sprintf("PS1='root@frr:~# '\nvtysh() { command %s \"$@\"; }\nvtysh\n", strings.Join(vt, " "))
	if err := os.WriteFile(rc, []byte(script), 0o644); err != nil {
		return err
	}
	env := []string{"HOME=" + r.Dir, "TERM=vt100", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}
	// A UTS namespace of its own names the console's machine "frr", as the appliance is, for
	// the shell prompt and for vtysh, which takes its first hostname from the system's.
	shell := fmt.Sprintf("hostname frr && exec bash --noprofile --rcfile %s -i", rc)
	c, err := bootConsole(r.Name, []string{ip, "netns", "exec", r.Namespace, "unshare", "--uts", "--", "sh", "-c", shell}, env, r.Dir, "frr# ")
	if err != nil {
		return err
	}
	r.console, r.ConsolePort = c, c.port()
	return nil
}

// waitFile waits for a daemon's vty socket, or reports the daemon's own words if it exits.
func (r *Router) waitFile(name string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(filepath.Join(r.Dir, name)); err == nil {
			return nil
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(filepath.Join(r.Dir, strings.TrimSuffix(name, ".vty")+".out"))
			return fmt.Errorf("%s: %s exited during start: %s", r.Name, strings.TrimSuffix(name, ".vty"), strings.TrimSpace(string(out)))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %s within %s", r.Name, name, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Vtysh runs vtysh -c commands on a router outside its console (to set a lab up or to check
// what a test did), and returns the output.
func (r *Router) Vtysh(cmds ...string) (string, error) {
	args := []string{"netns", "exec", r.Namespace, "vtysh", "--vty_socket", r.Dir, "--config_dir", r.Dir}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("vtysh on %s: %v: %s", r.Name, err, out)
	}
	return string(out), nil
}

// stop stops consoles (the hosts' too) and daemons by their PIDs (SIGTERM, then SIGKILL after 5 s) and deletes
// the namespaces this lab created, which takes their veth ends with them.
func (l *Lab) stop() {
	for _, r := range l.Routers {
		if r.console != nil {
			if err := r.console.stop(); err != nil {
				l.tb.Errorf("frrlab: %s: %v", r.Name, err)
			}
		}
		for _, d := range r.daemons {
			_ = d.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, h := range l.Hosts {
		if h.console != nil {
			if err := h.console.stop(); err != nil {
				l.tb.Errorf("frrlab: %s: %v", h.Name, err)
			}
		}
	}
	for _, r := range l.Routers {
		for i, d := range r.daemons {
			select {
			case <-r.exited[i]:
			case <-time.After(5 * time.Second):
				l.tb.Errorf("frrlab: %s: %s (pid %d) ignored SIGTERM for 5s; killing it", r.Name, r.daemonNames[i], d.Process.Pid)
				_ = d.Process.Kill()
				<-r.exited[i]
			}
		}
	}
	for _, ns := range l.namespaces {
		if err := run("ip", "netns", "del", ns); err != nil {
			l.tb.Errorf("frrlab: %v", err)
		}
	}
}
