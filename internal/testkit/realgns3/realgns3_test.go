package realgns3

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The harness on the real server: two VPCS linked, started, addressed and pinging, and the rule
// the fake GNS3 once got wrong (no snapshot of a running project) as the server states it.
func TestTwoVPCSPingAndNoSnapshotWhileRunning(t *testing.T) {
	s := Require(t)
	p := s.NewProject(t)
	pcs := p.AddVPCS(t, 2)
	p.Link(t, pcs[0], pcs[1])
	p.StartAll(t)
	p.Run(t, pcs[0].Name, "ip 10.77.0.1/24")
	p.Run(t, pcs[1].Name, "ip 10.77.0.2/24")
	if rtts := p.Ping(t, pcs[0].Name, "10.77.0.2", 3); len(rtts) == 0 {
		t.Fatalf("%s got no reply from %s", pcs[0].Name, pcs[1].Name)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.Do(ctx, http.MethodPost, "/v3/projects/"+p.ID+"/snapshots", map[string]string{"name": "while-running"}, nil)
	if err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), "must be stopped") {
		t.Fatalf("a snapshot of a running project: want GNS3's 409 \"must be stopped\", got %v", err)
	}
}
