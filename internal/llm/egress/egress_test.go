package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// mapResolver is a test resolver: names map to fixed addresses, so a name can "resolve" to
// loopback without any DNS.
type mapResolver map[string][]string

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := m[strings.ToLower(host)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out, nil
}

func mustPolicy(t *testing.T, allow []string, only bool) *Policy {
	t.Helper()
	p, err := New(allow, only)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNonPublic(t *testing.T) {
	refused := []string{"127.0.0.1", "127.8.9.1", "::1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"fe80::1", "fd00::1", "fc00::5", "224.0.0.1", "ff02::1", "0.0.0.0", "::", "100.64.0.1", "::ffff:127.0.0.1",
		"::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "255.255.255.255", "198.18.0.1", "fec0::1"}
	for _, s := range refused {
		if NonPublic(netip.MustParseAddr(s)) == "" {
			t.Errorf("%s counted as public", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "104.18.6.192", "2606:4700::6810:84e5", "64:ff9b::808:808", "172.32.0.1"} {
		if why := NonPublic(netip.MustParseAddr(s)); why != "" {
			t.Errorf("%s refused: %s", s, why)
		}
	}
	if !strings.Contains(NonPublic(netip.MustParseAddr("169.254.169.254")), "metadata") {
		t.Error("the link-local reason should name the metadata service")
	}
}

func TestNewRejectsWhatIsNotAHost(t *testing.T) {
	for _, s := range []string{"http://x.example", "10.0.0.0/33", "host:8080", "a b"} {
		if _, err := New([]string{s}, false); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	if _, err := New([]string{" ollama.lan ", "10.0.0.0/8", "192.168.1.10", "[::1]", "*", ""}, false); err != nil {
		t.Fatal(err)
	}
}

func TestCheckURL(t *testing.T) {
	def := mustPolicy(t, nil, false)
	for _, u := range []string{"http://127.0.0.1:8080/v1", "http://10.0.0.5/v1", "http://169.254.169.254/latest",
		"http://[::1]:11434/v1", "http://localhost:11434/v1", "http://LOCALHOST./v1", "http://api.localhost/v1",
		"http://[fe80::1%25eth0]/v1", "http://0.0.0.0:80/v1"} {
		err := def.CheckURL(u)
		var re *RefusedError
		if !errors.As(err, &re) {
			t.Errorf("%s: got %v, want a refusal", u, err)
		}
	}
	for _, u := range []string{"https://api.openai.com/v1", "http://8.8.8.8/v1", "http://internal.example.com/v1"} {
		if err := def.CheckURL(u); err != nil {
			t.Errorf("%s refused at save time: %v", u, err)
		}
	}

	wide := mustPolicy(t, []string{"localhost", "10.0.0.0/8"}, false)
	for _, u := range []string{"http://localhost:11434/v1", "http://10.9.9.9/v1"} {
		if err := wide.CheckURL(u); err != nil {
			t.Errorf("allowed %s refused: %v", u, err)
		}
	}
	if wide.CheckURL("http://192.168.1.1/v1") == nil {
		t.Error("192.168.1.1 is outside the allowed 10.0.0.0/8 and private")
	}
	if mustPolicy(t, []string{"*"}, false).CheckURL("http://127.0.0.1/v1") != nil {
		t.Error("* allows everything")
	}

	only := mustPolicy(t, []string{"llm.example.com"}, true)
	if err := only.CheckURL("https://LLM.example.com/v1"); err != nil {
		t.Errorf("listed host refused: %v", err)
	}
	for _, u := range []string{"https://api.openai.com/v1", "http://8.8.8.8/v1"} {
		if err := only.CheckURL(u); err == nil || !strings.Contains(err.Error(), "not on the operator's list") {
			t.Errorf("%s in allowlist-only mode: %v", u, err)
		}
	}
}

// server is an HTTP service on loopback standing for something internal.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, string) {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return s, u.Port()
}

func get(c *http.Client, u string) (string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func requireRefused(t *testing.T, err error, addr string) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a refusal", err)
	}
	if re.Addr.String() != addr {
		t.Fatalf("refused %v, want %s", re.Addr, addr)
	}
}

func TestClientRefusesAtConnectTime(t *testing.T) {
	hits := 0
	_, port := server(t, func(w http.ResponseWriter, r *http.Request) {
		hits++
		fmt.Fprint(w, `{"internal_secret":"x"}`)
	})
	res := mapResolver{"rebind.test": {"127.0.0.1"}, "metadata.test": {"169.254.169.254"},
		"mixed.test": {"10.255.255.1", "127.0.0.1"}}
	p := mustPolicy(t, nil, false).WithResolver(res)
	c := p.Client()

	_, err := get(c, "http://127.0.0.1:"+port+"/")
	requireRefused(t, err, "127.0.0.1")
	_, err = get(c, "http://rebind.test:"+port+"/")
	requireRefused(t, err, "127.0.0.1")
	if !strings.Contains(err.Error(), "rebind.test resolves to 127.0.0.1, a loopback address") {
		t.Errorf("message: %v", err)
	}
	_, err = get(c, "http://metadata.test/latest/meta-data/")
	requireRefused(t, err, "169.254.169.254")
	// Every resolved address is checked, not just the first.
	_, err = get(c, "http://mixed.test:"+port+"/")
	requireRefused(t, err, "10.255.255.1")
	if hits != 0 {
		t.Fatalf("the internal service was reached %d times", hits)
	}
}

func TestClientAllowances(t *testing.T) {
	_, port := server(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	res := mapResolver{"ollama.lan": {"127.0.0.1"}, "other.lan": {"127.0.0.1"}}

	byName := mustPolicy(t, []string{"Ollama.LAN"}, false).WithResolver(res).Client()
	if body, err := get(byName, "http://ollama.lan:"+port+"/"); err != nil || body != "ok" {
		t.Fatalf("allowed name: %q %v", body, err)
	}
	_, err := get(byName, "http://other.lan:"+port+"/")
	requireRefused(t, err, "127.0.0.1")

	byNet := mustPolicy(t, []string{"127.0.0.0/8"}, false).WithResolver(res).Client()
	if body, err := get(byNet, "http://other.lan:"+port+"/"); err != nil || body != "ok" {
		t.Fatalf("allowed CIDR: %q %v", body, err)
	}
	all := mustPolicy(t, []string{"*"}, false).WithResolver(res).Client()
	if body, err := get(all, "http://127.0.0.1:"+port+"/"); err != nil || body != "ok" {
		t.Fatalf("*: %q %v", body, err)
	}
	// Allowlist-only: a listed net is reachable, anything else (public or not) is not.
	only := mustPolicy(t, []string{"127.0.0.1"}, true).WithResolver(mapResolver{"public.test": {"8.8.8.8"}})
	if body, err := get(only.Client(), "http://127.0.0.1:"+port+"/"); err != nil || body != "ok" {
		t.Fatalf("allowlist: %q %v", body, err)
	}
	_, err = get(only.Client(), "http://public.test:"+port+"/")
	requireRefused(t, err, "8.8.8.8")
}

func TestRedirectIntoTheServerIsRefused(t *testing.T) {
	internalHits := 0
	_, internalPort := server(t, func(w http.ResponseWriter, r *http.Request) {
		internalHits++
		fmt.Fprint(w, "secret")
	})
	_, outsidePort := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://internal.test:"+internalPort+"/", http.StatusTemporaryRedirect)
	})
	// outside.test stands for a public endpoint the operator allowed by name; its redirect
	// goes to a name that resolves to loopback.
	p := mustPolicy(t, []string{"outside.test"}, false).
		WithResolver(mapResolver{"outside.test": {"127.0.0.1"}, "internal.test": {"127.0.0.1"}})
	_, err := get(p.Client(), "http://outside.test:"+outsidePort+"/")
	requireRefused(t, err, "127.0.0.1")
	if internalHits != 0 {
		t.Fatal("the redirect reached the internal service")
	}
}

// What the policy adds to opening a connection: a plain dial against one through the policy
// (the address allowed by CIDR, so the Control hook runs and passes).
func BenchmarkDial(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	ctx := context.Background()
	b.Run("plain", func(b *testing.B) {
		var d net.Dialer
		for b.Loop() {
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("policy", func(b *testing.B) {
		p, _ := New([]string{"127.0.0.0/8"}, false)
		for b.Loop() {
			c, err := p.DialContext(ctx, "tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
}
