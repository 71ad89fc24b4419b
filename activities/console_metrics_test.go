package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
)

// metricValue reads one series' sample count (a histogram) or value (a gauge) from the registry.
func metricValue(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue series
				}
			}
			if h := s.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return s.GetGauge().GetValue()
		}
	}
	return 0
}

// Issue 26: the device consoles' metrics come from the one place sessions are opened: a run
// counts its wait for the lock and its session while it is open (a busy device's wait that gave
// up: TestABusyDeviceIsReportedNotRetriedForever).
func TestConsoleSessionsAndLockWaitsAreMeasured(t *testing.T) {
	a, _, job, ref := deviceFixture(t)
	m := metrics.New()
	a.Metrics = m
	open := make(chan float64, 1)
	err := a.deviceRunner(ref).use(context.Background(), job, func(*devices.Session) error {
		open <- metricValue(t, m, "gns3_copilot_console_sessions_open", nil)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1.0, <-open, "a session counts while it is open")
	require.Equal(t, 0.0, metricValue(t, m, "gns3_copilot_console_sessions_open", nil))
	require.Equal(t, 1.0, metricValue(t, m, "gns3_copilot_console_lock_wait_seconds", map[string]string{"outcome": "acquired"}))
}
