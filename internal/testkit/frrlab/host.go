//go:build linux

package frrlab

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Host is a Linux host beside the routers, as a GNS3 Docker node or Linux VM whose console
// lands in a shell: a network namespace of its own (its links are veth ends, eth0, eth1, …) on
// a machine named after it, with a root bash on its console ("root@host1:~# "), or a login
// first when the lab asks for one.
type Host struct {
	Name       string
	Namespace  string
	Interfaces []string
	// ConsolePort is the telnet port of its console on 127.0.0.1.
	ConsolePort int
	Dir         string

	console *console
}

// Addr is the console address, "127.0.0.1:port".
func (h *Host) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(h.ConsolePort)) }

// Shell runs a shell command in the host's namespace outside its console (to set a test up or
// check what it did) and returns its output.
func (h *Host) Shell(cmd string) (string, error) {
	out, err := exec.Command("ip", "netns", "exec", h.Namespace, "sh", "-c", cmd).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s on %s: %v: %s", cmd, h.Name, err, out)
	}
	return string(out), nil
}

// loginScript asks for a user name and a password (not echoed) until they are the right ones,
// as login(1) does, then gives the shell.
const loginScript = `while :; do
  printf '%%s login: ' "$(hostname)"
  IFS= read -r u || exit 1
  printf 'Password: '
  stty -echo; IFS= read -r p; stty echo; printf '\n'
  [ "$u" = %q ] && [ "$p" = %q ] && break
  printf '\nLogin incorrect\n'
done
exec bash --noprofile --rcfile %s -i
`

// start opens the host's console: bash (after a login, with one) on a pty in the host's
// namespace, on a machine named after the host.
func (h *Host) start(ip string, login *Login) error {
	rc := filepath.Join(h.Dir, "bashrc")
	if err := os.WriteFile(rc, []byte(`PS1='\u@\h:\w\$ '`+"\n"), 0o644); err != nil {
		return err
	}
	shell, ready := "exec bash --noprofile --rcfile "+rc+" -i", "root@"+h.Name+":~# "
	if login != nil {
		script := filepath.Join(h.Dir, "login.sh")
		if err := os.WriteFile(script, []byte(fmt.Sprintf(loginScript, login.User, login.Password, rc)), 0o644); err != nil {
			return err
		}
		shell, ready = "exec sh "+script, h.Name+" login: "
	}
	env := []string{"HOME=" + h.Dir, "TERM=vt100", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}
	argv := []string{ip, "netns", "exec", h.Namespace, "unshare", "--uts", "--", "sh", "-c", "hostname " + h.Name + " && " + shell}
	c, err := bootConsole(h.Name, argv, env, h.Dir, ready)
	if err != nil {
		return err
	}
	h.console, h.ConsolePort = c, c.port()
	return nil
}
