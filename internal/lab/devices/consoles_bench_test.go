package devices_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// BenchmarkOpenConsolesVPCS measures what one open console costs the process that holds it
// open, which is what --max-open-consoles bounds: live heap, and goroutines (sockets are one per
// console by construction). The consoles are 50 real vpcs processes, so nothing the devices do
// is counted. One op opens all 50 consoles, measures, and closes them.
//
//	go test -run '^$' -bench OpenConsoles -benchtime 3x ./devices
func BenchmarkOpenConsolesVPCS(b *testing.B) {
	const n = 50
	lab := vpcslab.Start(b, n)
	vpcs, err := devices.ProfileByName("vpcs")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	live := func() (uint64, int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, runtime.NumGoroutine()
	}
	var heap, goroutines float64
	rounds := 0
	for b.Loop() {
		heap0, g0 := live()
		sessions := make([]*devices.Session, 0, n)
		for _, node := range lab.Nodes {
			s, err := devices.Open(ctx, node.Addr(), vpcs, devices.Options{})
			if err != nil {
				b.Fatal(err)
			}
			sessions = append(sessions, s)
		}
		heap1, g1 := live()
		heap += float64(int64(heap1)-int64(heap0)) / n
		goroutines += float64(g1-g0) / n
		rounds++
		for _, s := range sessions {
			s.Close()
		}
		runtime.KeepAlive(sessions)
	}
	b.ReportMetric(heap/float64(rounds), "heap-B/console")
	b.ReportMetric(goroutines/float64(rounds), "goroutines/console")
}
