package activities

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeios"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// A configuration job's device work as the worker runs it, the approval wait excluded: read
// every device's configuration, apply the lines, read again and diff, all devices at once up to
// the default device concurrency (as the workflow's fan-out) and the default process-wide bound
// on open consoles (as the service's worker). apply-ms/op is the apply phase
// alone, read-ms/op both reads and the diff; compare 1 with many devices for the ratio.
//
//	go test -run '^$' -bench ConfigJob -benchtime 5x ./activities
func BenchmarkConfigJobFakeIOS1(b *testing.B)   { benchConfigJob(b, iosJobs, 1) }
func BenchmarkConfigJobFakeIOS200(b *testing.B) { benchConfigJob(b, iosJobs, 200) }
func BenchmarkConfigJobVPCS1(b *testing.B)      { benchConfigJob(b, vpcsJobs, 1) }
func BenchmarkConfigJobVPCS50(b *testing.B)     { benchConfigJob(b, vpcsJobs, 50) }

// lineFn gives a device's lines for iteration i, so every iteration really changes something.
type lineFn func(i int) []string

func iosJobs(b *testing.B, n int) ([]tools.DeviceJob, lineFn) {
	jobs := make([]tools.DeviceJob, n)
	for k := range jobs {
		s := fakeios.Start(b, fakeios.Options{Hostname: fmt.Sprintf("R%d", k+1)})
		host, port, _ := strings.Cut(s.Addr(), ":")
		p, _ := strconv.Atoi(port)
		id := fmt.Sprintf("r%d", k)
		jobs[k] = tools.DeviceJob{NodeID: id, Name: fmt.Sprintf("R%d", k+1), Platform: "cisco_ios", Config: true,
			Target: domain.DeviceTarget{NodeID: id, Name: fmt.Sprintf("R%d", k+1), NodeType: "dynamips", Tags: []string{"device_type:cisco_ios"},
				ConsoleType: "telnet", ConsoleHost: host, ConsolePort: p}}
	}
	return jobs, func(i int) []string {
		return []string{"interface GigabitEthernet0/1", fmt.Sprintf("ip address 10.%d.%d.1 255.255.255.0", i/250, i%250+1), "no shutdown"}
	}
}

func vpcsJobs(b *testing.B, n int) ([]tools.DeviceJob, lineFn) {
	lab := vpcslab.Start(b, n)
	jobs := make([]tools.DeviceJob, n)
	for k, node := range lab.Nodes {
		id := fmt.Sprintf("pc%d", k)
		jobs[k] = tools.DeviceJob{NodeID: id, Name: node.Name, Platform: "vpcs",
			Target: domain.DeviceTarget{NodeID: id, Name: node.Name, NodeType: "vpcs", ConsoleType: "telnet", ConsoleHost: "127.0.0.1", ConsolePort: node.ConsolePort}}
	}
	// "set pcname" rather than "ip": VPCS spends 3 s of its own in every "ip" (its duplicate
	// address check), which would measure VPCS, not the job.
	return jobs, func(i int) []string { return []string{fmt.Sprintf("set pcname bench%d", i)} }
}

func benchConfigJob(b *testing.B, lab func(*testing.B, int) ([]tools.DeviceJob, lineFn), n int) {
	jobs, lines := lab(b, n)
	a := benchActivities(b)
	tool := tools.ConfigCommandsTool
	if jobs[0].Platform == "vpcs" {
		tool = tools.VPCSCommandsTool
	}
	// Each phase over every device, a bounded number at once, as the workflow runs it.
	each := func(fn func(job tools.DeviceJob) error) {
		sem := make(chan struct{}, workflows.DefaultDeviceConcurrency)
		var wg sync.WaitGroup
		for _, job := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				if err := fn(job); err != nil {
					b.Errorf("%s: %v", job.Name, err)
				}
			}()
		}
		wg.Wait()
	}
	var apply, reads time.Duration
	iter := 0
	for b.Loop() {
		iter++
		ref := workflows.ToolCallRef{WorkRef: workflows.WorkRef{TurnID: fmt.Sprintf("t%d", iter), SessionID: "s", ProjectID: "p", UserID: "u"},
			CallID: "c", ToolName: tool}
		for k := range jobs {
			jobs[k].Commands = lines(iter)
		}
		read := func(phase string) func(tools.DeviceJob) error {
			return func(job tools.DeviceJob) error {
				return a.ReadDeviceConfig(context.Background(), workflows.ReadConfigInput{Turn: ref, Job: job, Phase: phase})
			}
		}
		t0 := time.Now()
		each(read(workflows.ReadBefore))
		t1 := time.Now()
		each(func(job tools.DeviceJob) error {
			if out := a.deviceRunner(ref).RunDevice(context.Background(), job); out.Err != "" || len(out.Results) == 0 {
				return fmt.Errorf("apply: %+v", out)
			}
			return nil
		})
		t2 := time.Now()
		each(read(workflows.ReadAfter))
		each(func(job tools.DeviceJob) error {
			recs, err := a.DeviceRecords.Commands(context.Background(), ref.TurnID, ref.CallID, job.NodeID)
			if err != nil {
				return err
			}
			ch := compareReads(job, outcomeFromRecords(job, recs), recs, nil)
			if ch.Error != "" || len(ch.Added) == 0 {
				return fmt.Errorf("diff: %+v", ch)
			}
			return nil
		})
		t3 := time.Now()
		apply += t2.Sub(t1)
		reads += t1.Sub(t0) + t3.Sub(t2)
	}
	b.ReportMetric(float64(apply.Milliseconds())/float64(iter), "apply-ms/op")
	b.ReportMetric(float64(reads.Milliseconds())/float64(iter), "read-ms/op")
	b.ReportMetric(float64(len(jobs)), "devices")
}
