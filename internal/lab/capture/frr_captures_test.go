package capture

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The captures in testdata were recorded on real FRR routers (see testdata/README.md and
// TestFreshFRRCaptures, which records them afresh and holds them to the same checks).
func TestRecordedFRRCaptures(t *testing.T) {
	for _, sc := range frrScenarios {
		t.Run(strings.TrimSuffix(sc.file, ".pcap"), func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", sc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := Read(f, 0, 0, nil)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("reading %s: %v", sc.file, err)
			}
			sc.check(t, s)
		})
	}
}

// finding returns the first finding of a check, failing the test when there is none.
func finding(t *testing.T, s Summary, check string) Finding {
	t.Helper()
	for _, f := range s.Findings {
		if f.Check == check {
			return f
		}
	}
	t.Fatalf("no %s finding in:\n%s", check, s.Text())
	return Finding{}
}

func noFinding(t *testing.T, s Summary, check string) {
	t.Helper()
	for _, f := range s.Findings {
		if f.Check == check {
			t.Errorf("unexpected %s finding: %s", check, f.Text)
		}
	}
}

func textHas(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q:\n%s", w, text)
		}
	}
}

// R1 says hello every 2 s (dead 8), R2 every 3 s (dead 12): no adjacency, and the analysis
// names both mismatches as the fault, ahead of the counts.
func checkHelloMismatch(t *testing.T, s Summary) {
	f := finding(t, s, "ospf_hello_mismatch")
	if f.Severity != SeverityCritical {
		t.Errorf("severity %s", f.Severity)
	}
	textHas(t, f.Text, "1.1.1.1 (10.1.0.1)", "2.2.2.2 (10.1.0.2)", "hello interval 2 s vs 3 s", "likely fault", "no adjacency")
	textHas(t, finding(t, s, "ospf_dead_mismatch").Text, "dead interval 8 s vs 12 s")
	noFinding(t, s, "ospf_area_mismatch")
	noFinding(t, s, "ospf_mtu_mismatch")
	if len(s.OSPFRouters) != 2 || s.OSPFRouters[0].Area != "0.0.0.0" || s.OSPFRouters[1].NetworkMask != "255.255.255.0" {
		t.Errorf("routers: %+v", s.OSPFRouters)
	}
	text := s.Text()
	if !strings.HasPrefix(text, "Findings:\n  [critical] OSPF: OSPF hello interval mismatch") {
		t.Errorf("the text does not lead with the mismatch:\n%s", text)
	}
	if strings.Index(text, "Findings:") > strings.Index(text, "Protocols:") {
		t.Errorf("findings after the counts:\n%s", text)
	}
	textHas(t, text, "OSPFv2 ")
}

// R2's link has an MTU of 1400, R1's 1500: the hellos agree, the DBDs do not.
func checkMTUMismatch(t *testing.T, s Summary) {
	textHas(t, finding(t, s, "ospf_mtu_mismatch").Text, "MTU 1500 vs 1400 in DBD", "ExStart/Exchange")
	noFinding(t, s, "ospf_hello_mismatch")
	noFinding(t, s, "ospf_stuck_init")
}

// R1 expects AS 65002 from R2, which says 65003: R1 answers every OPEN with a NOTIFICATION.
func checkBGPWrongAS(t *testing.T, s Summary) {
	var bad *Finding
	for i, f := range s.Findings {
		if f.Check == "bgp_notification" && strings.Contains(f.Text, "Bad Peer AS") {
			bad = &s.Findings[i]
		}
	}
	if bad == nil {
		t.Fatalf("no Bad Peer AS finding:\n%s", s.Text())
	}
	if bad.Severity != SeverityCritical {
		t.Errorf("severity %s", bad.Severity)
	}
	textHas(t, bad.Text, "10.1.0.1 sent 10.1.0.2 a NOTIFICATION: OPEN Message Error / Bad Peer AS (code 2/2", "announces AS 65003", "wrong AS")
	if len(s.BGP) != 1 || s.BGP[0].State == "Established" {
		t.Errorf("sessions: %+v", s.BGP)
	}
	if !strings.HasPrefix(s.Text(), "Findings:\n  [critical] BGP:") {
		t.Errorf("the text does not lead with the NOTIFICATION:\n%s", s.Text())
	}
}

// A session that came up: both OPENs, KEEPALIVEs both ways, R1's prefix in an UPDATE.
func checkBGPEstablished(t *testing.T, s Summary) {
	if len(s.BGP) != 1 {
		t.Fatalf("sessions: %+v", s.BGP)
	}
	b := s.BGP[0]
	if b.State != "Established" || len(b.Opens) != 2 || len(b.Notifications) != 0 || b.Announced < 1 {
		t.Errorf("session: %+v", b)
	}
	ases := map[uint32]bool{}
	for _, o := range b.Opens {
		ases[o.AS] = true
		if o.HoldTime != 9 {
			t.Errorf("hold time %d, want the configured 9", o.HoldTime)
		}
	}
	if !ases[65001] || !ases[65002] {
		t.Errorf("OPENs: %+v", b.Opens)
	}
	for _, f := range s.Findings {
		if f.Severity == SeverityCritical {
			t.Errorf("critical finding on a healthy session: %s", f.Text)
		}
	}
}
