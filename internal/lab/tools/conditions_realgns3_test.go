package tools

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/realgns3"
)

// directConsole reaches consoles without the worker's lock and records (the activities' Console
// adds them): what a test on the real GNS3 needs of Env.Console.
func directConsole(host string) Console {
	return func(ctx context.Context, job DeviceJob, commands func(*devices.Profile) []string) (*devices.Profile, []devices.CommandResult, error) {
		var profile *devices.Profile
		var out []devices.CommandResult
		err := devices.Use(ctx, nil, devices.Target(job.Target), host, devices.Options{}, func(s *devices.Session) error {
			profile = s.Profile()
			for _, c := range commands(profile) {
				res, err := s.Run(ctx, c)
				if err != nil {
					return err
				}
				out = append(out, res)
			}
			return nil
		})
		return profile, out, err
	}
}

// A 200 ms delay set, cleared and measured on the real GNS3 v3.0.6 with two VPCS, by ping round
// trips before, with the delay, after GNS3's own {} (what its link dialog sends) and after
// clear_gns3_link_conditions. The filter acts in both directions, so the delay adds about 400 ms;
// on 3.0.x {} leaves it applied while GNS3 reads none; the tool really clears it and says the
// pings crossed at the normal latency.
func TestLinkDelayMeasuredOnRealGNS3(t *testing.T) {
	s := realgns3.Require(t)
	p := s.NewProject(t)
	pcs := p.AddVPCS(t, 2)
	link := p.Link(t, pcs[0], pcs[1])
	p.StartAll(t)
	p.Run(t, "PC1", "ip 10.199.0.1/24")
	p.Run(t, "PC2", "ip 10.199.0.2/24")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	v, err := s.API.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env := Env{ProjectID: p.ID, GNS3: s.Client, GNS3Host: s.Host(), Attempt: 1, Console: directConsole(s.Host())}
	reg := NewRegistry(LabTools()...)
	run := func(name, args string) Result {
		t.Helper()
		r := reg.Execute(ctx, env, LabAutomation, name, args)
		if !r.Success {
			t.Fatalf("%s: %s", name, r.JSON())
		}
		return r
	}
	// The fastest round trip of a few: a delay raises every one, a busy machine some.
	pings := func(when string) time.Duration {
		t.Helper()
		rtts := p.Ping(t, "PC1", "10.199.0.2", 4)
		if len(rtts) < 3 {
			t.Fatalf("%s: PC1 got %d replies from PC2: %v", when, len(rtts), rtts)
		}
		t.Logf("%s: round trips %v", when, rtts)
		return slices.Min(rtts)
	}

	if m := pings("before"); m >= normalRTT {
		t.Fatalf("before any condition the fastest round trip is %v", m)
	}
	run(SetLinkConditionsTool, `{"links": [{"node_a": "PC1", "node_b": "PC2", "delay_ms": 200}]}`)
	if m := pings("with a 200 ms delay"); m < 390*time.Millisecond || m > 600*time.Millisecond {
		t.Fatalf("with a 200 ms delay in both directions the fastest round trip is %v, want about 400 ms", m)
	}

	// What GNS3's own link dialog sends to clear the link.
	if _, err := s.Client.UpdateLink(ctx, p.ID, link.LinkID, gns3.LinkUpdate{Filters: &gns3.LinkFilters{}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Client.GetLink(ctx, p.ID, link.LinkID)
	if err != nil || len(got.Filters) != 0 {
		t.Fatalf("GNS3 after {}: %+v %v", got, err)
	}
	m := pings("after GNS3's own {}")
	if LinkFaultsClearable(v.Version) != (m < normalRTT) {
		t.Fatalf("GNS3 %s after {}: fastest round trip %v; LinkFaultsClearable says %v", v.Version, m, LinkFaultsClearable(v.Version))
	}

	began := time.Now()
	r := run(ClearLinkConditionsTool, `{"links": [{"node_a": "PC1", "node_b": "PC2"}]}`)
	t.Logf("clear_gns3_link_conditions took %v: %s", time.Since(began).Round(time.Millisecond), r.Data[0].Result)
	if res := r.Data[0].Result; !strings.Contains(res, "Traffic crosses it at its normal latency: PC1 pinged 10.199.0.2 (PC2)") &&
		!strings.Contains(res, "Traffic crosses it at its normal latency: PC2 pinged 10.199.0.1 (PC1)") {
		t.Fatalf("the tool did not check the traffic: %s", res)
	}
	if m := pings("after clear_gns3_link_conditions"); m >= normalRTT {
		t.Fatalf("after clear_gns3_link_conditions the fastest round trip is %v", m)
	}
	// The link kept its id: nothing was deleted and created again.
	if err := s.Do(ctx, http.MethodGet, "/v3/projects/"+p.ID+"/links/"+link.LinkID, nil, nil); err != nil {
		t.Fatal(err)
	}
}
