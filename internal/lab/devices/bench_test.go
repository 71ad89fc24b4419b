package devices_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
)

// BenchmarkShowIP1 and BenchmarkShowIP50 run "show ip" on 1 and on 50 real
// vpcs nodes at once; one op is one round over every node. "connect"
// includes opening and closing each console (what a tool call does),
// "persistent" reuses open sessions. The 50-node round must stay well
// under twice the 1-node round.
func BenchmarkShowIP1(b *testing.B)  { benchShowIP(b, 1) }
func BenchmarkShowIP50(b *testing.B) { benchShowIP(b, 50) }

func benchShowIP(b *testing.B, n int) {
	lab := vpcslab.Start(b, n)
	ctx := context.Background()
	vpcs, err := devices.ProfileByName("vpcs")
	if err != nil {
		b.Fatal(err)
	}
	check := func(r devices.CommandResult, err error) {
		if err != nil {
			b.Error(err)
		} else if r.Failed || !strings.HasPrefix(r.Output, "NAME") {
			b.Errorf("bad result %+v", r)
		}
	}

	b.Run("connect", func(b *testing.B) {
		for b.Loop() {
			var wg sync.WaitGroup
			for _, node := range lab.Nodes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s, err := devices.Open(ctx, node.Addr(), vpcs, devices.Options{})
					if err != nil {
						b.Error(err)
						return
					}
					check(s.Run(ctx, "show ip"))
					s.Close()
				}()
			}
			wg.Wait()
		}
	})

	b.Run("persistent", func(b *testing.B) {
		sessions := make([]*devices.Session, n)
		for i, node := range lab.Nodes {
			s, err := devices.Open(ctx, node.Addr(), vpcs, devices.Options{})
			if err != nil {
				b.Fatal(err)
			}
			sessions[i] = s
		}
		defer func() {
			for _, s := range sessions {
				s.Close()
			}
		}()
		for b.Loop() {
			var wg sync.WaitGroup
			for _, s := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					check(s.Run(ctx, "show ip"))
				}()
			}
			wg.Wait()
		}
	})
}
