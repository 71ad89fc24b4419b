package devices_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// TestRecordTranscripts records the console transcripts FuzzConsole's seeds are made of, from a
// real VPCS and a real FRR router (see testdata/transcripts/README.md). Without
// GNS3COPILOT_RECORD_TRANSCRIPTS=1 it records them into a temporary directory and holds them
// to what the replays in FuzzConsole's seeds need: the platform found, every command answered.
func TestRecordTranscripts(t *testing.T) {
	dir := t.TempDir()
	if os.Getenv("GNS3COPILOT_RECORD_TRANSCRIPTS") == "1" {
		dir = filepath.Join("testdata", "transcripts")
	}
	t.Run("vpcs", func(t *testing.T) {
		lab := vpcslab.Start(t, 2)
		record(t, filepath.Join(dir, "vpcs.txt"), "vpcs", func(ctx context.Context, o devices.Options) (*devices.Session, error) {
			return devices.Open(ctx, lab.Nodes[0].Addr(), nil, o)
		})
	})
	t.Run("frr", func(t *testing.T) {
		lab := frrlab.Start(t, frrlab.Options{Routers: 2})
		record(t, filepath.Join(dir, "frr.txt"), "frr", func(ctx context.Context, o devices.Options) (*devices.Session, error) {
			return devices.Connect(ctx, frrTarget(lab.Routers[0]), "", o)
		})
	})
}

func record(t *testing.T, file, platform string, open func(context.Context, devices.Options) (*devices.Session, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var transcript bytes.Buffer
	s, err := open(ctx, devices.Options{Transcript: &transcript})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Profile().Name != platform {
		t.Fatalf("detected %s", s.Profile().Name)
	}
	var conf []string
	flush := func() {
		if len(conf) == 0 {
			return
		}
		res, err := s.Configure(ctx, conf)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Failed {
				t.Fatalf("%q: %+v", conf, r)
			}
		}
		conf = nil
	}
	for _, line := range bytes.Split([]byte(devices.RecordedSessions[filepath.Base(file)]), []byte("\n")) {
		if c, ok := bytes.CutPrefix(line, []byte("conf ")); ok {
			conf = append(conf, string(c))
			continue
		}
		flush()
		if r, err := s.Run(ctx, string(line)); err != nil || r.Failed {
			t.Fatalf("%s: %+v %v", line, r, err)
		}
	}
	flush()
	if err := os.WriteFile(file, transcript.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
