package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

// fakeDevice is what a device's console answers a traffic check: its platform, its
// configuration read, and per address what a ping to it printed.
type fakeDevice struct {
	platform string
	config   string
	pings    map[string]string
}

// fakeConsoles stands in for the worker's consoles (Env.Console) with devices' answers.
type fakeConsoles struct {
	mu      sync.Mutex
	devices map[string]*fakeDevice
	ran     []string
	// onPing runs before a ping answers (the bridge dying meanwhile).
	onPing func()
}

func (f *fakeConsoles) console(_ context.Context, job DeviceJob, commands func(*devices.Profile) []string) (*devices.Profile, []devices.CommandResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.devices[job.Name]
	if d == nil {
		return nil, nil, errors.New("connection refused")
	}
	p, err := devices.ProfileByName(d.platform)
	if err != nil {
		return nil, nil, err
	}
	var out []devices.CommandResult
	for _, c := range commands(p) {
		f.ran = append(f.ran, job.Name+"> "+c)
		res := devices.CommandResult{Command: c}
		if c == p.ConfigCommand() {
			res.Output = d.config
		} else {
			if f.onPing != nil {
				f.onPing()
			}
			for addr, printed := range d.pings {
				if strings.Contains(c, " "+addr) {
					res.Output = printed
				}
			}
		}
		out = append(out, res)
	}
	return p, out, nil
}

func (f *fakeConsoles) commands() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.ran, "\n")
}

func vpcsShowIP(name, addr, gw string) string {
	return fmt.Sprintf("\r\nNAME        : %s[1]\r\nIP/MASK     : %s\r\nGATEWAY     : %s\r\nDNS         : \r\nMAC         : 00:50:79:66:68:00\r\n", name, addr, gw)
}

// vpcsPing is what VPCS prints for five echo requests answered in ms each (0: a timeout).
func vpcsPing(addr string, ms ...float64) string {
	var b strings.Builder
	for i, m := range ms {
		if m == 0 {
			fmt.Fprintf(&b, "%s icmp_seq=%d timeout\r\n", addr, i+1)
			continue
		}
		fmt.Fprintf(&b, "84 bytes from %s icmp_seq=%d ttl=64 time=%.3f ms\r\n", addr, i+1, m)
	}
	return b.String()
}

// startedPCs is PC1 — PC2, both started, with consoles that answer as addressed VPCS do.
func startedPCs(t *testing.T, opts ...fakegns3.Option) (*lab, fakegns3.Link, *fakeConsoles) {
	t.Helper()
	l := newLab(t, opts...)
	a := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	b := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", X: 300, Status: "started"})
	link := l.fake.AddLink(l.pid, a.ID, 0, 0, b.ID, 0, 0)
	cons := &fakeConsoles{devices: map[string]*fakeDevice{
		"PC1": {platform: "vpcs", config: vpcsShowIP("PC1", "10.0.0.1/24", "0.0.0.0"),
			pings: map[string]string{"10.0.0.2": vpcsPing("10.0.0.2", 0.4, 0.2, 0.2, 0.3, 0.2)}},
		"PC2": {platform: "vpcs", config: vpcsShowIP("PC2", "10.0.0.2/24", "0.0.0.0")},
	}}
	l.env.Console = cons.console
	return l, link, cons
}

var pcLink = []map[string]any{{"node_a": "PC1", "node_b": "PC2"}}

// On GNS3 3.0.6 a plain {} leaves a delay applied while GNS3 reads none. The tool passes
// through a filter that matches nothing, so uBridge ends with only that; on 3.1 with nothing.
// Then it pings across the link and says what came back.
func TestClearReallyClearsAndPingsAcross(t *testing.T) {
	for _, tc := range []struct{ version, applied string }{
		{"3.0.6", "map[bpf:[ether proto 0x88b5]]"},
		{"3.1.0a2", "map[]"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			l, link, cons := startedPCs(t, fakegns3.WithVersion(tc.version))
			mustSucceed(t, l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{
				{"node_a": "PC1", "node_b": "PC2", "delay_ms": 200, "jitter_ms": 10, "loss_percent": 5}}}))
			if applied, _ := l.fake.Bridge(link.ID); fmt.Sprint(applied) != "map[delay:[200 10] packet_loss:[5]]" {
				t.Fatalf("uBridge applies %v", applied)
			}
			puts := l.fake.Count(fakegns3.OpUpdateLink)
			r := l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink})
			mustSucceed(t, r)
			if n := l.fake.Count(fakegns3.OpUpdateLink) - puts; n != 2 {
				t.Fatalf("%d PUTs, want the no-match filter then the clear", n)
			}
			if got := filtersOf(t, l, link.ID); got != "map[] suspended=false" {
				t.Fatalf("GNS3 shows %s", got)
			}
			applied, dead := l.fake.Bridge(link.ID)
			if dead || fmt.Sprint(applied) != tc.applied {
				t.Fatalf("uBridge applies %v (dead %v), want %s", applied, dead, tc.applied)
			}
			want := "conditions now none (before: delay 200 ms ±10 ms, 5 % packet loss). Traffic crosses it at its normal latency: " +
				"PC1 pinged 10.0.0.2 (PC2): 5 of 5 replies, round trip 0.2 ms (median)."
			if res := item(t, r, "PC1 Ethernet0 <-> PC2 Ethernet0").Result; !strings.HasSuffix(res, want) {
				t.Fatalf("result: %q\nwant …%q", res, want)
			}
			if got := cons.commands(); got != "PC1> show ip\nPC2> show ip\nPC1> ping 10.0.0.2 -c 5" {
				t.Fatalf("console commands:\n%s", got)
			}
		})
	}
}

// A delay uBridge still applies, seen by the pings, is never reported cleared.
func TestClearSaysWhenPingsStillShowTheDelay(t *testing.T) {
	l, link, cons := startedPCs(t)
	l.fake.SetLinkConditions(link.ID, map[string][]any{"delay": {200, 0}}, false)
	cons.devices["PC1"].pings["10.0.0.2"] = vpcsPing("10.0.0.2", 402, 400.4, 400.3, 400.5, 400.2)
	r := l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink})
	it := item(t, r, "PC1 Ethernet0 <-> PC2 Ethernet0")
	if r.Success || it.Status != StatusFailed || !strings.Contains(it.Error, "PC1 pinged 10.0.0.2 (PC2): 5 of 5 replies, round trip 400.4 ms (median): "+
		"the link still delays packets (its 200 ms delay acted in both directions, adding about 400 ms to a round trip)") {
		t.Fatalf("%s", r.JSON())
	}
	if !strings.Contains(it.Error, "uBridge still applies some") || !strings.Contains(it.Error, "save PC1's configuration and reload it") {
		t.Fatalf("no repair said: %s", it.Error)
	}
}

// A bridge that is dead before the clear answers its first change with 409: broken, with what
// repairs it, and nothing else is tried.
func TestClearReportsADeadBridgeAsBroken(t *testing.T) {
	l, link, cons := startedPCs(t)
	l.fake.SetLinkConditions(link.ID, map[string][]any{"delay": {200, 0}}, false)
	l.fake.KillLinkBridge(link.ID)
	r := l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink})
	it := item(t, r, "PC1 Ethernet0 <-> PC2 Ethernet0")
	for _, want := range []string{"the link is broken: its bridge in PC1's uBridge is gone", "bridge 'VPCS-", "doesn't exist",
		"save PC1's configuration", "reload PC1", "clear the link's conditions again"} {
		if r.Success || !strings.Contains(it.Error, want) {
			t.Fatalf("missing %q: %s", want, r.JSON())
		}
	}
	if strings.Contains(it.Result, "conditions now") || cons.commands() != "" {
		t.Fatalf("a broken link is not reported cleared nor pinged: %s\n%s", r.JSON(), cons.commands())
	}

	// Reloading PC1 repairs it: the next clear works (and on 3.0.x the old delay was back).
	if applied, _ := l.fake.Bridge(link.ID); fmt.Sprint(applied) != "map[bpf:[ether proto 0x88b5]]" {
		t.Fatalf("the refused change reached the compute's copy: %v", applied)
	}
	if err := l.env.GNS3.ReloadNode(context.Background(), l.pid, link.Ends[0].NodeID); err != nil {
		t.Fatal(err)
	}
	mustSucceed(t, l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink}))
}

// A bridge that dies while the filters change answers only the next change: when nothing
// crosses the link, the tool asks it with one, and reports the link broken.
func TestClearFindsABridgeThatDiedOnTheWay(t *testing.T) {
	l, link, cons := startedPCs(t)
	l.fake.SetLinkConditions(link.ID, map[string][]any{"delay": {200, 0}}, false)
	cons.onPing = func() { l.fake.KillLinkBridge(link.ID) }
	cons.devices["PC1"].pings["10.0.0.2"] = vpcsPing("10.0.0.2", 0, 0, 0, 0, 0)
	r := l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink})
	if it := item(t, r, "PC1 Ethernet0 <-> PC2 Ethernet0"); r.Success || !strings.Contains(it.Error, "the link is broken") {
		t.Fatalf("%s", r.JSON())
	}

	// The same silence on a live bridge is not called broken: the pings are reported.
	l2, link2, cons2 := startedPCs(t)
	l2.fake.SetLinkConditions(link2.ID, map[string][]any{"delay": {200, 0}}, false)
	cons2.devices["PC1"].pings["10.0.0.2"] = vpcsPing("10.0.0.2", 0, 0, 0, 0, 0)
	r = l2.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink})
	it := item(t, r, "PC1 Ethernet0 <-> PC2 Ethernet0")
	if r.Success || strings.Contains(it.Error, "broken") || !strings.Contains(it.Error, "PC1 pinged 10.0.0.2 (PC2): no reply to 5 echo requests") {
		t.Fatalf("%s", r.JSON())
	}
}

// Where no device can ping across the link, the clear is done as on every link and the result
// says the traffic was not checked, and why.
func TestClearSaysWhyTrafficWasNotChecked(t *testing.T) {
	l, link, cons := startedPCs(t)
	cons.devices["PC2"].config = vpcsShowIP("PC2", "0.0.0.0/0", "0.0.0.0")
	r := l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink})
	mustSucceed(t, r)
	if res := r.Data[0].Result; !strings.HasSuffix(res, "Traffic was not checked: PC2: it has no IPv4 address.") {
		t.Fatalf("%q", res)
	}
	if err := l.env.GNS3.StopNode(context.Background(), l.pid, link.Ends[1].NodeID); err != nil {
		t.Fatal(err)
	}
	r = l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink})
	if res := r.Data[0].Result; !strings.HasSuffix(res, "Traffic was not checked: PC2: it is stopped.") {
		t.Fatalf("%q", res)
	}
	l.env.Console = nil
	r = l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink})
	if res := r.Data[0].Result; !strings.HasSuffix(res, "Traffic was not checked: consoles cannot be reached from here.") {
		t.Fatalf("%q", res)
	}
}

// Two routers joined twice: the addresses on the interfaces the cleared link's ports name are
// the ones pinged.
func TestClearPingsAcrossTheRightOfTwoRouterLinks(t *testing.T) {
	l := newLab(t)
	r1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: fakegns3.RouterTemplateID, Name: "R1", Status: "started"})
	r2 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: fakegns3.RouterTemplateID, Name: "R2", X: 300, Status: "started"})
	l.fake.AddLink(l.pid, r1.ID, 0, 0, r2.ID, 0, 0)
	second := l.fake.AddLink(l.pid, r1.ID, 1, 0, r2.ID, 1, 0)
	l.fake.SetLinkConditions(second.ID, map[string][]any{"delay": {50, 0}}, false)
	ios := func(a0, a1 string) string {
		return "hostname R\n!\ninterface GigabitEthernet0/0\n ip address " + a0 + " 255.255.255.252\n!\ninterface GigabitEthernet0/1\n ip address " +
			a1 + " 255.255.255.252\n!\nend\n"
	}
	cons := &fakeConsoles{devices: map[string]*fakeDevice{
		"R1": {platform: "cisco_ios", config: ios("10.0.12.1", "10.0.21.1"), pings: map[string]string{
			"10.0.21.2": "Type escape sequence to abort.\n!!!!!\nSuccess rate is 100 percent (5/5), round-trip min/avg/max = 1/2/4 ms"}},
		"R2": {platform: "cisco_ios", config: ios("10.0.12.2", "10.0.21.2")},
	}}
	l.env.Console = cons.console
	r := l.run(t, ClearLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": second.ID}}})
	mustSucceed(t, r)
	if !strings.HasSuffix(r.Data[0].Result, "R1 pinged 10.0.21.2 (R2): 5 of 5 replies, round trip 2.0 ms (median).") ||
		!strings.Contains(cons.commands(), "R1> ping 10.0.21.2 repeat 5") {
		t.Fatalf("%s\n%s", r.JSON(), cons.commands())
	}
}

// A VPCS on a switch: whatever it pings crosses its one link, so it pings a PC behind the switch.
func TestClearPingsThroughASwitch(t *testing.T) {
	l := newLab(t)
	pc1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	pc2 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", Status: "started"})
	sw := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Template: fakegns3.EthernetSwitchTemplateID, Name: "SW1"})
	cut := l.fake.AddLink(l.pid, pc1.ID, 0, 0, sw.ID, 0, 0)
	other := l.fake.AddLink(l.pid, pc2.ID, 0, 0, sw.ID, 0, 1)
	l.fake.SetLinkConditions(cut.ID, map[string][]any{"delay": {100, 0}}, false)
	l.fake.SetLinkConditions(other.ID, map[string][]any{"delay": {30, 0}}, false)
	cons := &fakeConsoles{devices: map[string]*fakeDevice{
		"PC1": {platform: "vpcs", config: vpcsShowIP("PC1", "10.0.0.1/24", "0.0.0.0"),
			pings: map[string]string{"10.0.0.2": vpcsPing("10.0.0.2", 61, 60.5, 60.4, 60.6, 60.3)}},
		"PC2": {platform: "vpcs", config: vpcsShowIP("PC2", "10.0.0.2/24", "0.0.0.0")},
	}}
	l.env.Console = cons.console
	r := l.run(t, ClearLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": cut.ID}}})
	mustSucceed(t, r)
	want := "PC1 pinged 10.0.0.2 (PC2) through PC2 Ethernet0 <-> SW1 Ethernet1: 5 of 5 replies, round trip 60.5 ms (median)."
	if !strings.HasSuffix(r.Data[0].Result, want) {
		t.Fatalf("%s\nwant …%s", r.JSON(), want)
	}
}

// Resuming a suspended link on 3.0.x: resumed alone it would keep dropping everything.
func TestClearResumesASuspendedLinkForReal(t *testing.T) {
	l, link, _ := startedPCs(t)
	mustSucceed(t, l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": link.ID, "suspend": true}}}))
	if applied, _ := l.fake.Bridge(link.ID); fmt.Sprint(applied) != "map[frequency_drop:[-1]]" {
		t.Fatalf("suspended: %v", applied)
	}
	mustSucceed(t, l.run(t, ClearLinkConditionsTool, map[string]any{"links": pcLink}))
	if applied, _ := l.fake.Bridge(link.ID); fmt.Sprint(applied) != "map[bpf:[ether proto 0x88b5]]" {
		t.Fatalf("resumed: uBridge applies %v", applied)
	}
}

// A delay replaced by another goes through the no-match filter too, and the result says how
// conditions come off on 3.0.x.
func TestReplacingADelayPassesThroughTheNoMatchFilter(t *testing.T) {
	l, link, _ := startedPCs(t)
	mustSucceed(t, l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": link.ID, "delay_ms": 200, "jitter_ms": 10}}}))
	puts := l.fake.Count(fakegns3.OpUpdateLink)
	r := l.run(t, SetLinkConditionsTool, map[string]any{"links": []map[string]any{{"link_id": link.ID, "delay_ms": 300}}})
	mustSucceed(t, r)
	if n := l.fake.Count(fakegns3.OpUpdateLink) - puts; n != 2 {
		t.Fatalf("%d PUTs", n)
	}
	if applied, _ := l.fake.Bridge(link.ID); fmt.Sprint(applied) != "map[delay:[300 10]]" {
		t.Fatalf("uBridge applies %v", applied)
	}
	if res := r.Data[0].Result; !strings.Contains(res, "conditions now delay 300 ms ±10 ms (before: delay 200 ms ±10 ms). On this GNS3 (3.0.x), "+
		"removing them in GNS3's own link dialog leaves them applied: remove them with clear_gns3_link_conditions.") {
		t.Fatalf("%q", res)
	}
	set, _ := l.reg.Lookup(SetLinkConditionsTool)
	for _, fact := range []string{"both directions", "200 ms delay adds about 400 ms", "ARP"} {
		if !strings.Contains(set.Description(), fact) {
			t.Errorf("the description does not say %q", fact)
		}
	}
}

// On GNS3 3.0.x an exercise puts no fault on a link: a student could not clear it from GNS3's
// own dialog. From 3.1 on it may.
func TestInjectionPutsNoLinkFaultOn30(t *testing.T) {
	record := func(l *lab) *[]InjectedFault {
		l.reg.Register(ExerciseTools()[0])
		var got []InjectedFault
		l.env.RecordFault = func(_ context.Context, f InjectedFault) error { got = append(got, f); return nil }
		return &got
	}
	set := map[string]any{"links": []map[string]any{{"node_a": "PC1", "node_b": "PC2", "loss_percent": 60}}}
	rec := map[string]any{"link": map[string]any{"node_a": "PC1", "node_b": "PC2"}, "description": "60 % loss", "hints": []string{"Pings get lost."}}

	l, link, _ := startedPCs(t)
	got := record(l)
	r := l.runMode(t, TroubleshootingInjection, SetLinkConditionsTool, set)
	mustFailWhole(t, r, "no link faults on this GNS3 (3.0.6): on GNS3 3.0.x a student cannot take conditions off a link from GNS3's own link dialog")
	if !strings.Contains(r.Error, "Inject a fault on a device instead") {
		t.Fatal(r.Error)
	}
	l.fake.SetLinkConditions(link.ID, map[string][]any{"packet_loss": {60}}, false)
	mustFailWhole(t, l.runMode(t, TroubleshootingInjection, RecordFaultTool, rec), "no link faults on this GNS3 (3.0.6)")
	if len(*got) != 0 {
		t.Fatalf("recorded: %+v", *got)
	}
	// Lab automation still sets conditions on 3.0.x: the copilot clears them for real.
	mustSucceed(t, l.run(t, SetLinkConditionsTool, set))

	l31, _, _ := startedPCs(t, fakegns3.WithVersion("3.1.0a2"))
	got = record(l31)
	mustSucceed(t, l31.runMode(t, TroubleshootingInjection, SetLinkConditionsTool, set))
	mustSucceed(t, l31.runMode(t, TroubleshootingInjection, RecordFaultTool, rec))
	if len(*got) != 1 || (*got)[0].Link == nil || (*got)[0].Link.Conditions != "60 % packet loss" {
		t.Fatalf("recorded: %+v", *got)
	}
}

// The exercise's check of a link fault: conditions left, or pings that show them, are not a
// repair; the check itself changes nothing.
func TestCheckLinkVerifiesTraffic(t *testing.T) {
	l, link, cons := startedPCs(t)
	l.fake.SetLinkConditions(link.ID, map[string][]any{"delay": {200, 0}}, false)
	c, err := CheckLink(context.Background(), l.env, "PC2", "PC1", 200*time.Millisecond)
	if err != nil || c.Conditions != "delay 200 ms" || c.Measured {
		t.Fatalf("%+v %v", c, err)
	}
	// Cleared as GNS3's own dialog does on 3.0.6: GNS3 reads none, uBridge still delays.
	l.fake.SetLinkConditions(link.ID, nil, false)
	if applied, _ := l.fake.Bridge(link.ID); fmt.Sprint(applied) != "map[delay:[200 0]]" {
		t.Fatalf("uBridge applies %v", applied)
	}
	cons.devices["PC1"].pings["10.0.0.2"] = vpcsPing("10.0.0.2", 401, 400.3, 400.4, 400.2, 400.3)
	puts := l.fake.Count(fakegns3.OpUpdateLink)
	c, err = CheckLink(context.Background(), l.env, "PC1", "PC2", 200*time.Millisecond)
	if err != nil || c.Conditions != "" || !c.Measured || c.TrafficOK || !strings.Contains(c.Traffic, "round trip 400.3 ms") {
		t.Fatalf("%+v %v", c, err)
	}
	if n := l.fake.Count(fakegns3.OpUpdateLink); n != puts {
		t.Fatal("the check changed the link")
	}
	cons.devices["PC1"].pings["10.0.0.2"] = vpcsPing("10.0.0.2", 0.5, 0.2, 0.2, 0.3, 0.2)
	if c, err = CheckLink(context.Background(), l.env, "PC1", "PC2", 200*time.Millisecond); err != nil || !c.TrafficOK {
		t.Fatalf("%+v %v", c, err)
	}
	if d := ConditionDelay("delay 200 ms ±20 ms, 5 % packet loss"); d != 200*time.Millisecond || ConditionDelay("5 % packet loss") != 0 {
		t.Fatalf("ConditionDelay: %v", d)
	}
}
