//go:build linux

package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/frrlab"
)

// frrScenario is a two-router FRR lab whose link is captured on R1's end for a while.
type frrScenario struct {
	file     string
	daemons  []string
	duration time.Duration
	// r1 and r2 are vtysh lines after "configure terminal"; link runs before them (ip commands
	// in the router's namespace, e.g. an MTU).
	r1, r2 []string
	link   func(t *testing.T, lab *frrlab.Lab)
	// check is what the analysis of the capture must say.
	check func(t *testing.T, s Summary)
}

// frrScenarios are the faults of testdata/README.md, as they were recorded.
var frrScenarios = []frrScenario{
	{file: "ospf_hello_mismatch.pcap", duration: 9 * time.Second,
		r1:    []string{"interface eth0", "ip address 10.1.0.1/24", "ip ospf hello-interval 2", "ip ospf dead-interval 8", "exit", "router ospf", "ospf router-id 1.1.1.1", "network 10.1.0.0/24 area 0"},
		r2:    []string{"interface eth0", "ip address 10.1.0.2/24", "ip ospf hello-interval 3", "ip ospf dead-interval 12", "exit", "router ospf", "ospf router-id 2.2.2.2", "network 10.1.0.0/24 area 0"},
		check: checkHelloMismatch},
	{file: "ospf_mtu_mismatch.pcap", duration: 9 * time.Second,
		link: func(t *testing.T, lab *frrlab.Lab) {
			out, err := exec.Command("ip", "-n", lab.Routers[1].Namespace, "link", "set", "eth0", "mtu", "1400").CombinedOutput()
			if err != nil {
				t.Fatalf("mtu: %v: %s", err, out)
			}
		},
		r1:    []string{"interface eth0", "ip address 10.1.0.1/24", "ip ospf hello-interval 1", "ip ospf dead-interval 4", "exit", "router ospf", "ospf router-id 1.1.1.1", "network 10.1.0.0/24 area 0"},
		r2:    []string{"interface eth0", "ip address 10.1.0.2/24", "ip ospf hello-interval 1", "ip ospf dead-interval 4", "exit", "router ospf", "ospf router-id 2.2.2.2", "network 10.1.0.0/24 area 0"},
		check: checkMTUMismatch},
	{file: "bgp_wrong_as.pcap", daemons: []string{"bgpd"}, duration: 9 * time.Second,
		r1:    []string{"interface eth0", "ip address 10.1.0.1/24", "exit", "router bgp 65001", "bgp router-id 1.1.1.1", "no bgp ebgp-requires-policy", "neighbor 10.1.0.2 remote-as 65002", "neighbor 10.1.0.2 timers connect 2"},
		r2:    []string{"interface eth0", "ip address 10.1.0.2/24", "exit", "router bgp 65003", "bgp router-id 2.2.2.2", "no bgp ebgp-requires-policy", "neighbor 10.1.0.1 remote-as 65001", "neighbor 10.1.0.1 timers connect 2"},
		check: checkBGPWrongAS},
	{file: "bgp_established.pcap", daemons: []string{"bgpd"}, duration: 9 * time.Second,
		r1: []string{"interface eth0", "ip address 10.1.0.1/24", "exit", "ip route 192.0.2.0/24 Null0", "router bgp 65001", "bgp router-id 1.1.1.1", "no bgp ebgp-requires-policy",
			"neighbor 10.1.0.2 remote-as 65002", "neighbor 10.1.0.2 timers 3 9", "neighbor 10.1.0.2 timers connect 2", "address-family ipv4 unicast", "network 192.0.2.0/24"},
		r2: []string{"interface eth0", "ip address 10.1.0.2/24", "exit", "router bgp 65002", "bgp router-id 2.2.2.2", "no bgp ebgp-requires-policy",
			"neighbor 10.1.0.1 remote-as 65001", "neighbor 10.1.0.1 timers 3 9", "neighbor 10.1.0.1 timers connect 2"},
		check: checkBGPEstablished},
}

// Each scenario is recorded afresh on real FRR and its analysis checked, as the committed
// captures are by TestRecordedFRRCaptures. GNS3COPILOT_RECORD_CAPTURES=1 also writes the
// captures into testdata/.
func TestFreshFRRCaptures(t *testing.T) {
	if _, err := exec.LookPath("dumpcap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("recording FRR captures needs dumpcap (apt-get install -y tshark)")
		}
		t.Skip("recording FRR captures needs dumpcap (apt-get install -y tshark); skipping")
	}
	for _, sc := range frrScenarios {
		t.Run(strings.TrimSuffix(sc.file, ".pcap"), func(t *testing.T) {
			t.Parallel()
			data := recordFRR(t, sc)
			s, err := Read(bytes.NewReader(data), 0, 0, nil)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("reading the capture: %v", err)
			}
			sc.check(t, s)
			if os.Getenv("GNS3COPILOT_RECORD_CAPTURES") == "1" {
				if err := os.WriteFile(filepath.Join("testdata", sc.file), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// recordFRR starts the scenario's lab, starts capturing R1's eth0, configures both routers and
// returns the pcap once the scenario's duration has passed.
func recordFRR(t *testing.T, sc frrScenario) []byte {
	lab := frrlab.Start(t, frrlab.Options{Routers: 2, ExtraDaemons: sc.daemons})
	if sc.link != nil {
		sc.link(t, lab)
	}
	out := filepath.Join(t.TempDir(), sc.file)
	secs := int(sc.duration / time.Second)
	cmd := exec.Command("ip", "netns", "exec", lab.Routers[0].Namespace, "dumpcap", "-q", "-i", "eth0", "-P",
		"-a", "duration:"+strconv.Itoa(secs), "-w", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-done
		}
	})
	// The capture is running once dumpcap has created its file.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(out); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dumpcap did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, lines := range [][]string{sc.r1, sc.r2} {
		if o, err := lab.Routers[i].Vtysh(append([]string{"configure terminal"}, lines...)...); err != nil {
			t.Fatalf("%s: %v: %s", lab.Routers[i].Name, err, o)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dumpcap: %v: %s", err, stderr.String())
		}
	case <-time.After(sc.duration + 20*time.Second):
		t.Fatal("dumpcap did not stop at the end of its duration")
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
