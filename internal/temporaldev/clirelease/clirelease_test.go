package clirelease_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev/clirelease"
)

// archive builds a release-shaped tar.gz holding files.
func archive(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// release serves /v<version>/ like the release host: the archive and checksums.txt.
func release(t *testing.T, version, name string, body []byte, checksums string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/v"+version+"/"+name, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	mux.HandleFunc("/v"+version+"/checksums.txt", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(checksums)) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// A version without a pinned checksum, so the published one is what is checked.
const testVersion = "0.0.7"

func TestFetchInstallsAVerifiedArchive(t *testing.T) {
	name := clirelease.ArchiveName(testVersion, "linux", "amd64")
	body := archive(t, map[string]string{"LICENSE": "MIT", "temporal": "#!/bin/sh\necho temporal version 0.0.7\n"})
	srv := release(t, testVersion, name, body, sum([]byte("other"))+"  temporal_cli_0.0.7_darwin_arm64.tar.gz\n"+sum(body)+"  "+name+"\n")
	dest := filepath.Join(t.TempDir(), "temporal")
	var steps []string
	err := clirelease.Fetch(context.Background(), clirelease.Options{BaseURL: srv.URL, Version: testVersion, GOOS: "linux", GOARCH: "amd64", Dest: dest,
		Progress: func(s string) { steps = append(steps, s) }})
	require.NoError(t, err)
	got, err := os.ReadFile(dest)
	require.NoError(t, err)
	assert.Equal(t, "#!/bin/sh\necho temporal version 0.0.7\n", string(got))
	fi, err := os.Stat(dest)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	assert.Len(t, steps, 3, "says what it fetches and that the checksum matched: %q", steps)
}

func TestFetchRefusesAMismatch(t *testing.T) {
	name := clirelease.ArchiveName(testVersion, "linux", "amd64")
	body := archive(t, map[string]string{"temporal": "tampered"})
	srv := release(t, testVersion, name, body, sum([]byte("the real archive"))+"  "+name+"\n")
	dir := t.TempDir()
	dest := filepath.Join(dir, "temporal")
	err := clirelease.Fetch(context.Background(), clirelease.Options{BaseURL: srv.URL, Version: testVersion, GOOS: "linux", GOARCH: "amd64", Dest: dest})
	require.ErrorIs(t, err, clirelease.ErrChecksum)
	assert.NoFileExists(t, dest)
	left, _ := os.ReadDir(dir)
	assert.Empty(t, left, "no temporary file is left behind")
}

func TestFetchRefusesAChangedPinnedRelease(t *testing.T) {
	name := clirelease.ArchiveName("1.5.1", "linux", "amd64")
	body := archive(t, map[string]string{"temporal": "not the real 1.5.1"})
	// The checksums file agrees with the archive, but not with the checksum pinned in the code.
	srv := release(t, "1.5.1", name, body, sum(body)+"  "+name+"\n")
	err := clirelease.Fetch(context.Background(), clirelease.Options{BaseURL: srv.URL, Version: "1.5.1", GOOS: "linux", GOARCH: "amd64", Dest: filepath.Join(t.TempDir(), "temporal")})
	require.ErrorIs(t, err, clirelease.ErrChecksum)
	assert.Contains(t, err.Error(), "is pinned here")
}

func TestFetchFailures(t *testing.T) {
	name := clirelease.ArchiveName(testVersion, "linux", "amd64")
	noBinary := archive(t, map[string]string{"LICENSE": "MIT"})
	cases := []struct {
		name, checksums, want string
		body                  []byte
	}{
		{"not listed", sum(noBinary) + "  something_else.tar.gz\n", "lists no checksum for " + name, noBinary},
		{"no binary inside", sum(noBinary) + "  " + name + "\n", "holds no temporal binary", noBinary},
		{"not an archive", sum([]byte("<html>")) + "  " + name + "\n", "unpacking", []byte("<html>")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := release(t, testVersion, name, c.body, c.checksums)
			dest := filepath.Join(t.TempDir(), "temporal")
			err := clirelease.Fetch(context.Background(), clirelease.Options{BaseURL: srv.URL, Version: testVersion, GOOS: "linux", GOARCH: "amd64", Dest: dest})
			require.ErrorContains(t, err, c.want)
			assert.NoFileExists(t, dest)
		})
	}
	// Nothing published at that address.
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	err := clirelease.Fetch(context.Background(), clirelease.Options{BaseURL: srv.URL, Version: testVersion, GOOS: "linux", GOARCH: "amd64", Dest: filepath.Join(t.TempDir(), "temporal")})
	require.ErrorContains(t, err, "404")
}
