package activities

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// The device half of a tool call as the worker runs it: per device, the lock, the connection,
// `show ip`, and the records written before and after the command (SQLite). One op runs every
// device of the lab at once, as the workflow's fan-out does.
//
//	go test -run '^$' -bench DeviceTool -benchtime 20x ./activities
func BenchmarkDeviceTool1(b *testing.B)  { benchDeviceTool(b, 1) }
func BenchmarkDeviceTool50(b *testing.B) { benchDeviceTool(b, 50) }

func benchDeviceTool(b *testing.B, n int) {
	lab := vpcslab.Start(b, n)
	a := benchActivities(b)
	jobs := make([]tools.DeviceJob, n)
	for i, node := range lab.Nodes {
		jobs[i] = tools.DeviceJob{NodeID: fmt.Sprintf("n%d", i), Name: node.Name, Platform: "vpcs", Commands: []string{"show ip"},
			Target: domain.DeviceTarget{NodeID: fmt.Sprintf("n%d", i), Name: node.Name, NodeType: "vpcs", ConsoleType: "telnet",
				ConsoleHost: "127.0.0.1", ConsolePort: node.ConsolePort}}
	}
	iter := 0
	for b.Loop() {
		iter++
		ref := workflows.ToolCallRef{WorkRef: workflows.WorkRef{TurnID: fmt.Sprintf("t%d", iter), SessionID: "s", ProjectID: "p", UserID: "u"},
			CallID: "c", ToolName: tools.ShowCommandsTool}
		var wg sync.WaitGroup
		for _, job := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if out := a.deviceRunner(ref).RunDevice(context.Background(), job); out.Err != "" || len(out.Results) != 1 || out.Results[0].Failed {
					b.Errorf("%s: %+v", job.Name, out)
				}
			}()
		}
		wg.Wait()
	}
}

// benchActivities are the device activities over a fresh SQLite database, an in-memory event
// relay and an in-process device locker, as the device benchmarks run them.
func benchActivities(b *testing.B) *Activities {
	b.Helper()
	db, err := models.Open("sqlite:"+filepath.Join(b.TempDir(), "bench.db"), "")
	if err != nil {
		b.Fatal(err)
	}
	if err := models.Migrate(db); err != nil {
		b.Fatal(err)
	}
	events := relay.NewMemory(relay.MemoryOptions{})
	b.Cleanup(func() { _ = events.Close() })
	return &Activities{Events: events, GNS3: gns3.NewServer("http://127.0.0.1:9", time.Second),
		DeviceRecords: models.DeviceRepository{DB: db},
		Devices: DeviceAccess{Locker: devices.NewMemoryLocker(time.Minute), Policy: devices.DefaultPolicy(),
			Options: devices.Options{Consoles: devices.NewConsoleLimit(devices.DefaultMaxOpenConsoles)}}}
}
