package devices

import (
	"bytes"
	"testing"
)

func TestScreenText(t *testing.T) {
	cases := map[string]string{
		"a\r\nb\r\n":                      "a\nb\n",
		"abc\b\bX":                        "aX",
		"line\n\b\b\bnext":                "line\nnext",
		"\x1b[1mbold\x1b[0m":              "bold",
		"x\x1b]0;title\x07y":              "xy",
		"x\x1b]0;title\x1b\\y":            "xy",
		"\x1b(Bplain":                     "plain",
		"\x1b[?2004hroot# ":               "root# ",
		"  ---- More ----\x1b[42D" + "  ": "  ",
		"ab\x1b[1Dc":                      "ac",
		"tab\there\x00\x07":               "tab\there",
		"héllo\b\bo":                      "hélo",
	}
	for in, want := range cases {
		if got := StripANSI(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestScreenTextSplitEscapes(t *testing.T) {
	in := []byte("\x1b[1;32mgreen\x1b[0m --More-- \b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\bnext\r\n")
	for split := 1; split < len(in); split++ {
		var s screenText
		s.write(in[:split])
		s.write(in[split:])
		if got := string(s.buf); got != "greennext\n" {
			t.Fatalf("split at %d: %q", split, got)
		}
	}
}

func TestTelnetParser(t *testing.T) {
	stream := []byte("he\xff\xfb\x01llo\xff\xff\xff\xfd\x18\xff\xfa\x18\x01\xff\xf0 wor\xff\xf1ld\xff\xfb\x01\xff\xfd\x03\xff\xfe\x01\xff\xfc\x05")
	wantData := "hello\xff world"
	wantReply := []byte{255, 253, 1, 255, 252, 24, 255, 251, 3, 255, 252, 1, 255, 254, 5}
	for split := 0; split <= len(stream); split++ {
		var p telnetParser
		d1, r1 := p.feed(stream[:split], nil, nil)
		d2, r2 := p.feed(stream[split:], d1, r1)
		if string(d2) != wantData {
			t.Fatalf("split %d: data %q", split, d2)
		}
		if !bytes.Equal(r2, wantReply) {
			t.Fatalf("split %d: replies % x, want % x", split, r2, wantReply)
		}
	}
}

func TestEscapeIAC(t *testing.T) {
	if got := escapeIAC([]byte("a\xffb")); string(got) != "a\xff\xffb" {
		t.Fatalf("%q", got)
	}
	plain := []byte("show ip")
	if got := escapeIAC(plain); &got[0] != &plain[0] {
		t.Fatal("plain input should not be copied")
	}
}

func TestTidyOutput(t *testing.T) {
	if got := tidyOutput("\n\n  indented  \nline \t\n\n"); got != "  indented\nline" {
		t.Fatalf("%q", got)
	}
}
