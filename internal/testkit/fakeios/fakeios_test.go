package fakeios

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"
)

// readUntil reads from c until the accumulated bytes contain want.
func readUntil(t *testing.T, c net.Conn, want string) string {
	t.Helper()
	var buf bytes.Buffer
	b := make([]byte, 4096)
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(buf.String(), want) {
		c.SetReadDeadline(deadline)
		n, err := c.Read(b)
		buf.Write(b[:n])
		if err != nil {
			t.Fatalf("waiting for %q: %v; got %q", want, err, buf.String())
		}
	}
	return buf.String()
}

func TestRawSession(t *testing.T) {
	srv := Start(t, Options{})
	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	intro := readUntil(t, c, string(IOSIntro))
	if !strings.HasPrefix(intro, string(IOSIntro)) {
		t.Fatalf("intro % x", intro)
	}
	c.Write([]byte("\r"))
	readUntil(t, c, "R1>")
	c.Write([]byte("en\r\n"))
	readUntil(t, c, "R1#")
	c.Write([]byte("show running-config\r"))
	// Answer every pager prompt until the listing ends.
	var all bytes.Buffer
	b := make([]byte, 4096)
	pages := 0
	for !strings.HasSuffix(all.String(), "\r\nend\r\nR1#") {
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, err := c.Read(b)
		all.Write(b[:n])
		if err != nil {
			t.Fatalf("%v after %q", err, all.String())
		}
		if strings.HasSuffix(all.String(), " --More-- ") {
			pages++
			c.Write([]byte(" "))
		}
	}
	if pages < 2 || strings.Count(all.String(), "\b\b\b\b\b\b\b\b\b\b          \b") != pages {
		t.Fatalf("%d pages, erasures missing: %q", pages, all.String())
	}
	c.Write([]byte("conf t\rhostname R7\rend\r"))
	readUntil(t, c, "R7#")
	c.Write([]byte("show bogus\r"))
	readUntil(t, c, "% Invalid input detected at '^' marker.")
	if got := srv.Lines(); strings.Join(got, "|") != "en|show running-config|conf t|hostname R7|end|show bogus" {
		t.Fatalf("lines %q", got)
	}
}
