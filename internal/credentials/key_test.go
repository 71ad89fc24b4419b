package credentials

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreateKeyFromEnvironment(t *testing.T) {
	key := newKey(t)
	dir := filepath.Join(t.TempDir(), "data")
	for name, v := range map[string]string{
		"base64":          base64.StdEncoding.EncodeToString(key),
		"base64 unpadded": base64.RawStdEncoding.EncodeToString(key),
		"base64 url":      base64.URLEncoding.EncodeToString(key),
		"hex":             hex.EncodeToString(key),
		"hex upper":       strings.ToUpper(hex.EncodeToString(key)),
		"with whitespace": "  " + base64.StdEncoding.EncodeToString(key) + "\n",
	} {
		got, err := LoadOrCreateKey(dir, v)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("%s: LoadOrCreateKey = %x, %v", name, got, err)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a key from the environment still touched the data directory (%v)", err)
	}
}

func TestLoadOrCreateKeyRejectsBadEnvironmentKey(t *testing.T) {
	for v, want := range map[string]string{
		base64.StdEncoding.EncodeToString(make([]byte, 16)): "decodes to 16 bytes, want 32",
		hex.EncodeToString(make([]byte, 31)):                "want 32",
		"not a key!":                                        "neither hex nor base64",
	} {
		_, err := LoadOrCreateKey(t.TempDir(), v)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "configured secret key") {
			t.Errorf("LoadOrCreateKey(%q) error = %v, want it to say %q", v, err, want)
		}
	}
}

func TestLoadOrCreateKeyGeneratesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fresh", "data")
	key, err := LoadOrCreateKey(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != KeySize {
		t.Fatalf("generated key has %d bytes", len(key))
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("data directory mode = %v, %v; want 0700", info.Mode().Perm(), err)
	}
	path := filepath.Join(dir, KeyFileName)
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v; want 0600", info.Mode().Perm(), err)
	}
	again, err := LoadOrCreateKey(dir, "")
	if err != nil || !bytes.Equal(again, key) {
		t.Fatalf("second start read %x, %v; want the first key", again, err)
	}
	// The file holds base64 so an operator can move it into the environment as it is.
	content, _ := os.ReadFile(path)
	if fromEnv, err := LoadOrCreateKey(t.TempDir(), string(content)); err != nil || !bytes.Equal(fromEnv, key) {
		t.Fatalf("key file content is not usable as the environment value: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("data directory holds %d entries, want only the key file", len(entries))
	}
}

func TestLoadOrCreateKeyConcurrentStartsAgree(t *testing.T) {
	dir := t.TempDir()
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := LoadOrCreateKey(dir, "")
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for i := range keys {
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("concurrent starts got different keys")
		}
	}
}

func TestLoadOrCreateKeyRefusesOpenPermissions(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadOrCreateKey(dir, ""); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, KeyFileName)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadOrCreateKey(dir, "")
		if err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("key file mode %04o: error = %v, want a refusal that says chmod 600", mode, err)
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir, ""); err != nil {
		t.Fatalf("owner-only read-only key file refused: %v", err)
	}
}

func TestLoadOrCreateKeyRejectsBadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFileName)
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadOrCreateKey(dir, "")
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("corrupt key file: error = %v, want one naming %s", err, path)
	}
	// The bad file is kept for the operator to inspect, never replaced.
	if content, _ := os.ReadFile(path); string(content) != "short\n" {
		t.Fatalf("corrupt key file was overwritten")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir, ""); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory in place of the key file: error = %v", err)
	}
}

func TestLoadOrCreateKeyNeedsSomewhere(t *testing.T) {
	if _, err := LoadOrCreateKey("", ""); err == nil || !strings.Contains(err.Error(), "no secret key configured") {
		t.Fatalf("LoadOrCreateKey with nothing = %v", err)
	}
}
