package credentials

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// KeyFileName is the file in the data directory that holds a generated secret key.
const KeyFileName = "secret.key"

// maxKeyFileSize bounds what is read from a key file; a real one is 45 bytes.
const maxKeyFileSize = 4096

// ParseKey decodes a 32-byte secret key written as hex (64 digits) or base64 (standard or URL
// alphabet, padded or not), surrounding whitespace ignored.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("secret key is empty")
	}
	if len(s) == 2*KeySize {
		if key, err := hex.DecodeString(s); err == nil {
			return key, nil
		}
	}
	var key []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err = enc.DecodeString(s); err == nil {
			break
		}
	}
	if err != nil {
		return nil, errors.New("secret key is neither hex nor base64 (generate one with `openssl rand -base64 32`)")
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret key decodes to %d bytes, want %d (generate one with `openssl rand -base64 32`)", len(key), KeySize)
	}
	return key, nil
}

// LoadOrCreateKey returns the secret key that encrypts stored secrets. The operator's key, given
// as envValue (hex or base64 of 32 bytes), wins. Without it the key is read from
// <dataDir>/secret.key, which is generated on first start with 0600 permissions (the data
// directory is created 0700 if missing). A key file readable or writable by group or others is
// refused rather than silently used. Losing the key makes stored secrets unreadable, so the file
// is never overwritten.
func LoadOrCreateKey(dataDir string, envValue string) ([]byte, error) {
	if strings.TrimSpace(envValue) != "" {
		key, err := ParseKey(envValue)
		if err != nil {
			return nil, fmt.Errorf("credentials: the configured secret key: %w", err)
		}
		return key, nil
	}
	if dataDir == "" {
		return nil, errors.New("credentials: no secret key configured and no data directory to keep a generated one in")
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("credentials: creating data directory: %w", err)
	}
	path := filepath.Join(dataDir, KeyFileName)
	key, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	return createKeyFile(dataDir, path)
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("credentials: opening secret key file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("credentials: secret key file %s is not a regular file", path)
	}
	// Windows has no Unix permission bits to check.
	if perm := info.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("credentials: refusing secret key file %s: its permissions %04o let group or others access it; run `chmod 600 %s` (and consider the key exposed)", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("credentials: reading secret key file: %w", err)
	}
	if len(data) > maxKeyFileSize {
		return nil, fmt.Errorf("credentials: secret key file %s is too large to be a key", path)
	}
	key, err := ParseKey(string(data))
	if err != nil {
		return nil, fmt.Errorf("credentials: secret key file %s: %w", path, err)
	}
	return key, nil
}

// createKeyFile writes a new key to a temporary file and hard-links it into place, so a reader
// never sees a half-written key and two processes starting together agree on one key.
func createKeyFile(dir, path string) ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("credentials: generating secret key: %w", err)
	}
	content := []byte(base64.StdEncoding.EncodeToString(key) + "\n")

	tmp, err := os.CreateTemp(dir, ".secret.key-*") // created 0600
	if err != nil {
		return nil, fmt.Errorf("credentials: creating secret key file: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("credentials: writing secret key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("credentials: writing secret key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("credentials: writing secret key file: %w", err)
	}

	err = os.Link(tmpName, path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		// Another process created it first: use theirs.
		return readKeyFile(path)
	default:
		// Some filesystems have no hard links; an exclusive create is the next best thing.
		if err := writeExclusive(path, content); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return readKeyFile(path)
			}
			return nil, fmt.Errorf("credentials: writing secret key file: %w", err)
		}
	}
	syncDir(dir)
	return key, nil
}

func writeExclusive(path string, content []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A partial key file would block every later start.
		_ = os.Remove(path)
	}
	return err
}

// syncDir makes the new directory entry durable; failure only weakens crash safety, so it is not
// reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
