package devices

import (
	"net"
	"slices"
	"strings"
)

// shellUndo takes a Linux host's addresses and routes back, as "ip address" and "ip route"
// commands computed from the two read-backs (shellReadBack): routes the job added are deleted
// and addresses it added are removed first, then what it removed is put back, addresses before
// the routes that need them. Routes the kernel keeps by itself (proto kernel, link-local
// addresses) follow the addresses and are never written.
type shellUndo struct{}

func (shellUndo) undo(rb readBack, before, after string) UndoPlan {
	b, a := readShellState(rb, before), readShellState(rb, after)
	var out UndoPlan
	for _, r := range a.routes {
		if !slices.Contains(b.routes, r) {
			out.Lines = append(out.Lines, "ip route del "+r)
		}
	}
	for _, ad := range a.addrs {
		if !slices.Contains(b.addrs, ad) {
			out.Lines = append(out.Lines, "ip address del "+ad.addr+" dev "+ad.dev)
		}
	}
	devs := make([]string, 0, len(b.up))
	for dev := range b.up {
		devs = append(devs, dev)
	}
	slices.Sort(devs)
	for _, dev := range devs {
		if up, now := b.up[dev], a.up[dev]; now != up && hasKey(a.up, dev) {
			out.Lines = append(out.Lines, "ip link set dev "+dev+map[bool]string{true: " up", false: " down"}[up])
		}
	}
	for _, ad := range b.addrs {
		if _, still := a.up[ad.dev]; !still {
			out.Left = append(out.Left, "address "+ad.addr+" was on "+ad.dev+", which the host no longer has")
			continue
		}
		if !slices.Contains(a.addrs, ad) {
			out.Lines = append(out.Lines, "ip address add "+ad.addr+" dev "+ad.dev)
		}
	}
	for _, r := range b.routes {
		if !slices.Contains(a.routes, r) {
			out.Lines = append(out.Lines, "ip route add "+r)
		}
	}
	return out
}

type shellAddr struct{ dev, addr string }

type shellState struct {
	addrs  []shellAddr
	up     map[string]bool // by interface: whether it is up
	routes []string        // as "ip route add|del" take them: destination, via, dev, metric
}

// readShellState reads the brief ("eth0@if12 UP 10.0.0.1/24 …") or one-line ("2: eth0 inet
// 10.0.0.1/24 …") address listing and the route table that follows it.
func readShellState(rb readBack, output string) shellState {
	st := shellState{up: map[string]bool{}}
	for _, raw := range strings.Split(strings.ReplaceAll(output, "\r", ""), "\n") {
		line := raw
		if rb.rewrite != nil {
			line = rb.rewrite(line)
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case strings.HasSuffix(f[0], ":") && len(f) >= 4 && (f[2] == "inet" || f[2] == "inet6"):
			st.addAddr(f[1], f[3])
		case len(f) >= 2 && isLinkState(f[1]):
			dev, _, _ := strings.Cut(f[0], "@")
			st.up[dev] = f[1] == "UP" || f[1] == "UNKNOWN"
			for _, a := range f[2:] {
				st.addAddr(dev, a)
			}
		default:
			if r := routeSpec(f); r != "" {
				st.routes = append(st.routes, r)
			}
		}
	}
	return st
}

func (st *shellState) addAddr(dev, addr string) {
	dev, _, _ = strings.Cut(strings.TrimSuffix(dev, ":"), "@")
	ip, _, err := net.ParseCIDR(addr)
	if err != nil || ip.IsLinkLocalUnicast() || ip.IsLoopback() {
		return
	}
	if _, ok := st.up[dev]; !ok {
		st.up[dev] = true // the one-line listing shows no state: take it as it is
	}
	st.addrs = append(st.addrs, shellAddr{dev: dev, addr: addr})
}

func isLinkState(s string) bool {
	switch s {
	case "UP", "DOWN", "UNKNOWN", "LOWERLAYERDOWN", "DORMANT", "NOTPRESENT", "TESTING":
		return true
	}
	return false
}

// routeSpec is a route line of "ip route" reduced to what selects it and puts it back; "" for
// a route the kernel makes from an address, or a line that is no route.
func routeSpec(f []string) string {
	if slices.Contains(f, "kernel") && argAfter(f, "proto") == "kernel" {
		return ""
	}
	dest := f[0]
	if dest != "default" {
		if _, _, err := net.ParseCIDR(dest); err != nil && net.ParseIP(dest) == nil {
			return ""
		}
	}
	spec := []string{dest}
	for _, key := range []string{"via", "dev", "metric"} {
		if v := argAfter(f, key); v != "" {
			spec = append(spec, key, v)
		}
	}
	if len(spec) == 1 {
		return ""
	}
	return strings.Join(spec, " ")
}

func hasKey(m map[string]bool, k string) bool { _, ok := m[k]; return ok }
