// Package credentials keeps secrets worker-side and encrypted at rest: an AES-256-GCM sealer for
// values such as LLM API keys, the operator's secret key, and a short-lived store that holds a
// user's GNS3 token for the duration of a turn, so the token never travels through Temporal.
package credentials

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of the secret key: AES-256.
const KeySize = 32

// sealedVersion prefixes every sealed value so the format can change without guessing.
const sealedVersion = "v1"

var (
	// ErrWrongKey means a value was sealed under another secret key, typically because the
	// operator's key changed since it was stored.
	ErrWrongKey = errors.New("credentials: value was sealed under a different secret key")
	// ErrCorrupt means a sealed value is malformed, was altered, or is bound to other associated
	// data (for example a stored value copied to another row).
	ErrCorrupt = errors.New("credentials: sealed value is corrupt, altered, or belongs to another record")
)

// Sealer encrypts and authenticates small secrets with AES-256-GCM. It is safe for concurrent use.
//
// A sealed value reads `v1.<key id>.<base64url(nonce|ciphertext|tag)>`. The key id is a short
// keyed hash of the secret key: it reveals nothing about the key but lets Open tell "wrong key"
// apart from "tampered". The version and key id are authenticated along with the caller's
// associated data.
type Sealer struct {
	aead  cipher.AEAD
	keyID string
}

// NewSealer returns a sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("credentials: secret key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("gns3-copilot key id v1"))
	return &Sealer{aead: aead, keyID: hex.EncodeToString(mac.Sum(nil)[:4])}, nil
}

// KeyID identifies the secret key without revealing it; it is the second part of sealed values.
func (s *Sealer) KeyID() string { return s.keyID }

func (s *Sealer) additionalData(keyID string, associatedData []byte) []byte {
	// The header has a fixed length, so concatenating the caller's data after it is unambiguous.
	ad := make([]byte, 0, len(sealedVersion)+1+len(keyID)+1+len(associatedData))
	ad = append(ad, sealedVersion...)
	ad = append(ad, '.')
	ad = append(ad, keyID...)
	ad = append(ad, '.')
	return append(ad, associatedData...)
}

// Seal encrypts plaintext with a fresh random nonce. associatedData is not stored but must be given
// again to Open: bind a value to what it belongs to (its row key, its owner) so it cannot be moved.
func (s *Sealer) Seal(plaintext, associatedData []byte) (string, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("credentials: reading random nonce: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, plaintext, s.additionalData(s.keyID, associatedData))
	return sealedVersion + "." + s.keyID + "." + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value made by Seal with the same key and associated data. It returns ErrWrongKey
// when the value was sealed under another key and ErrCorrupt for anything else that fails.
func (s *Sealer) Open(sealed string, associatedData []byte) ([]byte, error) {
	version, rest, ok1 := strings.Cut(sealed, ".")
	keyID, body, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w (not a sealed value)", ErrCorrupt)
	}
	if version != sealedVersion {
		return nil, fmt.Errorf("%w (unknown format version %.8q)", ErrCorrupt, version)
	}
	if keyID != s.keyID {
		return nil, fmt.Errorf("%w (key id %.8s, current key id %s)", ErrWrongKey, keyID, s.keyID)
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return nil, fmt.Errorf("%w (bad encoding or length)", ErrCorrupt)
	}
	nonce, ct := raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, ct, s.additionalData(keyID, associatedData))
	if err != nil {
		return nil, ErrCorrupt
	}
	return plain, nil
}
