package credentials

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func newKey(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func newTestSealer(t testing.TB) *Sealer {
	t.Helper()
	s, err := NewSealer(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSealerRejectsWrongKeyLength(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := NewSealer(make([]byte, n)); err == nil || !strings.Contains(err.Error(), "want 32") {
			t.Errorf("NewSealer(%d bytes) error = %v", n, err)
		}
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	s := newTestSealer(t)
	for _, plain := range [][]byte{[]byte("sk-live-0123456789"), {}, bytes.Repeat([]byte{0, 0xff}, 5000)} {
		sealed, err := s.Seal(plain, []byte("llm-config:42"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sealed, "v1."+s.KeyID()+".") {
			t.Fatalf("sealed value %.20q lacks its version and key id", sealed)
		}
		got, err := s.Open(sealed, []byte("llm-config:42"))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("Open = %q, %v; want %q", got, err, plain)
		}
	}
}

func TestSealHidesPlaintextAndUsesFreshNonces(t *testing.T) {
	s := newTestSealer(t)
	secret := "gns3-bearer-token-abcdefghijklmnop"
	a, _ := s.Seal([]byte(secret), nil)
	b, _ := s.Seal([]byte(secret), nil)
	if a == b {
		t.Fatal("sealing twice gave the same output: nonce reuse")
	}
	for _, enc := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), base64.RawURLEncoding.EncodeToString([]byte(secret))} {
		if strings.Contains(a, enc) {
			t.Fatalf("sealed value contains the plaintext (%q)", enc)
		}
	}
}

func TestOpenWithWrongKey(t *testing.T) {
	sealed, _ := newTestSealer(t).Seal([]byte("secret"), nil)
	if _, err := newTestSealer(t).Open(sealed, nil); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("Open under another key = %v, want ErrWrongKey", err)
	}
}

func TestOpenWithWrongAssociatedData(t *testing.T) {
	s := newTestSealer(t)
	sealed, _ := s.Seal([]byte("secret"), []byte("turn-credential:a"))
	for _, ad := range [][]byte{nil, []byte("turn-credential:b"), []byte("turn-credential:a ")} {
		if _, err := s.Open(sealed, ad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open with associated data %q = %v, want ErrCorrupt", ad, err)
		}
	}
}

func TestOpenRejectsTampering(t *testing.T) {
	s := newTestSealer(t)
	sealed, _ := s.Seal([]byte("a secret worth stealing"), []byte("ad"))
	header := len("v1." + s.KeyID() + ".")
	// Flip every character of the body in turn: each must be detected.
	for i := header; i < len(sealed); i++ {
		b := []byte(sealed)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		if got, err := s.Open(string(b), []byte("ad")); err == nil {
			t.Fatalf("flipping byte %d went unnoticed (got %q)", i, got)
		}
	}
	cases := map[string]string{
		"empty":          "",
		"no separators":  "garbage",
		"future version": "v2" + sealed[2:],
		"other key id":   "v1.00000000" + sealed[len("v1.")+8:],
		"truncated":      sealed[:header+10],
		"not base64":     sealed[:header] + "!!!!" + sealed[header+4:],
		"appended":       sealed + "AAAA",
	}
	for name, v := range cases {
		if _, err := s.Open(v, []byte("ad")); !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrWrongKey) {
			t.Errorf("%s: Open = %v, want ErrCorrupt or ErrWrongKey", name, err)
		}
	}
}

func BenchmarkSealOpen(b *testing.B) {
	s := newTestSealer(b)
	secret := []byte("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.a-typical-gns3-jwt.signature")
	ad := bindingFor("turn-0123456789")
	for b.Loop() {
		v, err := s.Seal(secret, ad)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Open(v, ad); err != nil {
			b.Fatal(err)
		}
	}
}
