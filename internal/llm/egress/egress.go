// Package egress decides where the copilot may connect on behalf of a configuration it does not
// trust: a model endpoint saved by a regular GNS3 user must not reach into the server's own
// network (its loopback, the LAN, cloud metadata). The check runs when a connection is made, on
// the address actually dialled, so a host name that resolves to a private address, or is
// re-pointed at one after it was saved (DNS rebinding), or a redirect to one, is refused as
// surely as a literal private address.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Resolver turns a host name into addresses; *net.Resolver is one, tests give their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy is the operator's outbound policy for untrusted configurations. The zero value is not
// usable; build one with New.
type Policy struct {
	names         map[string]bool // host names allowed whatever they resolve to
	nets          []netip.Prefix  // addresses allowed although they are not public
	anyHost       bool            // "*": the operator trusts every endpoint
	allowlistOnly bool            // only names and nets on the list, public or not
	resolver      Resolver
	dialTimeout   time.Duration
}

// New builds a policy. allow holds host names (any case), CIDRs or single addresses, and "*";
// they widen what an untrusted configuration may reach beyond public addresses. With
// allowlistOnly, an untrusted configuration may reach only what allow lists.
func New(allow []string, allowlistOnly bool) (*Policy, error) {
	p := &Policy{names: map[string]bool{}, allowlistOnly: allowlistOnly, resolver: net.DefaultResolver,
		dialTimeout: 30 * time.Second}
	var bad []string
	for _, raw := range allow {
		s := strings.TrimSpace(raw)
		switch {
		case s == "":
		case s == "*":
			p.anyHost = true
		case strings.Contains(s, "/"):
			pfx, err := netip.ParsePrefix(s)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%q is not a CIDR such as 10.0.0.0/8", s))
				continue
			}
			p.nets = append(p.nets, pfx.Masked())
		default:
			h := strings.ToLower(strings.Trim(s, "[]"))
			if a, err := netip.ParseAddr(h); err == nil {
				p.nets = append(p.nets, netip.PrefixFrom(a.Unmap().WithZone(""), a.Unmap().BitLen()))
				continue
			}
			if strings.ContainsAny(h, ":/@ ") || strings.Contains(h, "://") {
				bad = append(bad, fmt.Sprintf("%q is not a host name, an address or a CIDR (give the host alone, without scheme or port)", s))
				continue
			}
			p.names[strings.TrimSuffix(h, ".")] = true
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("allowed LLM hosts: %s", strings.Join(bad, "; "))
	}
	return p, nil
}

// WithResolver makes the policy resolve names with r (tests use a resolver of their own).
func (p *Policy) WithResolver(r Resolver) *Policy {
	c := *p
	c.resolver = r
	return &c
}

// AllowlistOnly reports whether only listed hosts may be reached.
func (p *Policy) AllowlistOnly() bool { return p.allowlistOnly }

// RefusedError is a connection the policy did not allow.
type RefusedError struct {
	Host   string     // the host as written in the URL
	Addr   netip.Addr // the address it was going to connect to; invalid when refused by name
	Reason string     // "a loopback address", "not on the allowlist", …
}

func (e *RefusedError) Error() string {
	switch {
	case !e.Addr.IsValid():
		return fmt.Sprintf("%s is %s", e.Host, e.Reason)
	case e.Host == e.Addr.String():
		return fmt.Sprintf("%s is %s", e.Host, e.Reason)
	default:
		return fmt.Sprintf("%s resolves to %s, %s", e.Host, e.Addr, e.Reason)
	}
}

// CheckURL is the check made when a configuration is saved: it refuses what can be known to be
// refused without resolving anything (a literal private address, localhost, a host off the
// allowlist). Names are not resolved here: a saved name could be re-pointed later anyway, and
// resolving on request would let users probe the server's DNS.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if p.anyHost || p.names[host] {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr(host, a)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		// RFC 6761: always the machine itself.
		if p.checkAddr(host, netip.AddrFrom4([4]byte{127, 0, 0, 1})) != nil {
			return &RefusedError{Host: host, Reason: "the copilot server itself (loopback)"}
		}
	}
	if p.allowlistOnly && len(p.nets) == 0 {
		return &RefusedError{Host: host, Reason: "not on the operator's list of allowed LLM hosts"}
	}
	return nil
}

// checkAddr allows or refuses one address an untrusted configuration would connect to.
func (p *Policy) checkAddr(host string, a netip.Addr) error {
	a = a.Unmap().WithZone("")
	if p.anyHost {
		return nil
	}
	for _, n := range p.nets {
		if n.Contains(a) {
			return nil
		}
	}
	if p.allowlistOnly {
		return &RefusedError{Host: host, Addr: a, Reason: "not on the operator's list of allowed LLM hosts"}
	}
	if why := NonPublic(a); why != "" {
		return &RefusedError{Host: host, Addr: a, Reason: why}
	}
	return nil
}

var (
	sharedNet    = netip.MustParsePrefix("100.64.0.0/10")  // carrier-grade NAT
	thisNet      = netip.MustParsePrefix("0.0.0.0/8")      // "this network"
	ietfNet      = netip.MustParsePrefix("192.0.0.0/24")   // IETF protocol assignments
	benchNet     = netip.MustParsePrefix("198.18.0.0/15")  // benchmarking
	reservedNet  = netip.MustParsePrefix("240.0.0.0/4")    // reserved, and the broadcast address
	nat64Net     = netip.MustParsePrefix("64:ff9b::/96")   // NAT64: the IPv4 address is inside
	nat64LocNet  = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64
	sixToFourNet = netip.MustParsePrefix("2002::/16")      // 6to4: the IPv4 address is inside
	siteLocalNet = netip.MustParsePrefix("fec0::/10")      // deprecated, still routed in places
)

// NonPublic says why a is not a public address ("" when it is): loopback, private, link-local
// (169.254.169.254, the cloud metadata service, is one), unique-local, multicast, unspecified,
// or another range that never leads to the public internet. IPv6 forms that carry an IPv4
// address (mapped, NAT64, 6to4) are judged by that address.
func NonPublic(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	switch {
	case !a.IsValid():
		return "not an IP address"
	case a.IsUnspecified() || thisNet.Contains(a):
		return "an unspecified address (this host)"
	case a.IsLoopback():
		return "a loopback address of the copilot server"
	case a.IsLinkLocalUnicast():
		return "a link-local address (such as the cloud metadata service 169.254.169.254)"
	case a.IsMulticast():
		return "a multicast address"
	case a.Is4() && a.IsPrivate():
		return "a private address of the server's network"
	case a.Is6() && a.IsPrivate():
		return "a unique-local address of the server's network"
	case sharedNet.Contains(a), ietfNet.Contains(a), benchNet.Contains(a), reservedNet.Contains(a), siteLocalNet.Contains(a):
		return "a reserved address, not a public one"
	case nat64Net.Contains(a) || nat64LocNet.Contains(a):
		b := a.As16()
		return NonPublic(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixToFourNet.Contains(a):
		b := a.As16()
		return NonPublic(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return ""
}

// DialContext connects to addr ("host:port") for an untrusted configuration. It resolves the
// host itself and dials the addresses one by one, each through a dialer whose Control hook
// checks the address the socket is about to connect to; a host name the operator allowed is
// dialled without the check.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	port, err := net.LookupPort(network, portStr)
	if err != nil {
		return nil, err
	}
	trustedName := p.anyHost || p.names[name]
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lookup := "ip"
		switch network {
		case "tcp4":
			lookup = "ip4"
		case "tcp6":
			lookup = "ip6"
		}
		addrs, err = p.resolver.LookupNetIP(ctx, lookup, host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	var errs []error
	var refused error
	for _, a := range addrs {
		d := net.Dialer{Timeout: p.dialTimeout, KeepAlive: 30 * time.Second}
		if !trustedName {
			d.Control = p.control(name)
		}
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		var re *RefusedError
		if refused == nil && errors.As(err, &re) {
			refused = re
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if refused != nil {
		// The policy's answer is the one that matters to the user, not a later timeout.
		return nil, refused
	}
	return nil, errors.Join(errs...)
}

// control is the dialer hook: it sees the numeric address the socket connects to, after any
// resolution, so nothing between the check and the connection can change the answer.
func (p *Policy) control(host string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("egress: unexpected dial address %q: %w", address, err)
		}
		h := host
		if h == "" {
			h = ap.Addr().String()
		}
		return p.checkAddr(h, ap.Addr())
	}
}

// Client returns an HTTP client whose every connection, redirects included, goes through the
// policy. It never uses an HTTP proxy from the environment: the check must see the real
// destination, not the proxy's. Streams may run for minutes, so there is no overall timeout.
//
// It keeps up to 64 idle connections to one provider: a local model server (Ollama, vLLM,
// llama.cpp) speaks HTTP/1.1, one stream per connection, and a class's burst of turns makes
// two calls each (the answer and the session's title); with 16 kept, most of a burst's second
// calls dialled again, a few percent of serve's CPU in a 300-turn burst, and with TLS a
// handshake each. Idle ones close after 90 s.
func (p *Policy) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:           p.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
}
