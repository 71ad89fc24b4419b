package activities

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeios"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func deviceFixture(t *testing.T) (*Activities, *fakeios.Server, tools.DeviceJob, workflows.ToolCallRef) {
	t.Helper()
	db, err := models.Open("sqlite:"+filepath.Join(t.TempDir(), "t.db"), "")
	require.NoError(t, err)
	require.NoError(t, models.Migrate(db))
	ios := fakeios.Start(t, fakeios.Options{Hostname: "R1"})
	host, port, _ := strings.Cut(ios.Addr(), ":")
	p, _ := strconv.Atoi(port)
	events := relay.NewMemory(relay.MemoryOptions{})
	t.Cleanup(func() { _ = events.Close() })
	a := &Activities{
		Events:        events,
		GNS3:          gns3.NewServer("http://127.0.0.1:9", time.Second),
		DeviceRecords: models.DeviceRepository{DB: db},
		Devices:       DeviceAccess{Locker: devices.NewMemoryLocker(5 * time.Second), Policy: devices.DefaultPolicy()},
	}
	job := tools.DeviceJob{NodeID: "node-r1", Name: "R1", Config: true, Platform: "cisco_ios",
		Target: domain.DeviceTarget{NodeID: "node-r1", Name: "R1", NodeType: "dynamips", Tags: []string{"device_type:cisco_ios"},
			ConsoleType: "telnet", ConsoleHost: host, ConsolePort: p},
		Commands: []string{"interface GigabitEthernet0/0", "ip address 10.0.0.1 255.255.255.0", "no shutdown"}}
	ref := workflows.ToolCallRef{WorkRef: workflows.WorkRef{SessionID: "s", TurnID: "turn", ProjectID: "p", UserID: "u"},
		CallID: "call", ToolName: tools.ConfigCommandsTool}
	return a, ios, job, ref
}

// diedSendingTheSecondLine leaves the records of a worker that died while sending a job's second
// line (the first done, the third queued) and returns a runner for the retry.
func diedSendingTheSecondLine(t *testing.T, a *Activities, ref workflows.ToolCallRef, job tools.DeviceJob) *deviceRunner {
	t.Helper()
	ctx := context.Background()
	runner := a.deviceRunner(ref)
	require.NoError(t, a.DeviceRecords.Save(ctx, runner.record(job, 0, job.Commands[0], models.CommandOK)))
	require.NoError(t, a.DeviceRecords.Save(ctx, runner.record(job, 1, job.Commands[1], models.CommandSent)))
	require.NoError(t, a.DeviceRecords.Save(ctx, runner.record(job, 2, job.Commands[2], models.CommandQueued)))
	return runner
}

func statuses(t *testing.T, a *Activities, ref workflows.ToolCallRef) []string {
	t.Helper()
	recs, err := a.DeviceRecords.Commands(context.Background(), ref.TurnID, ref.CallID, "")
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		out = append(out, r.Command+"="+r.Status)
	}
	return out
}

func sentConfigLines(ios *fakeios.Server, job tools.DeviceJob) []string {
	var out []string
	for _, l := range ios.Lines() {
		if slices.Contains(job.Commands, strings.TrimSpace(l)) {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

func TestConfigurationIsRecordedAndARetrySendsNothingAgain(t *testing.T) {
	a, ios, job, ref := deviceFixture(t)
	out := a.deviceRunner(ref).RunDevice(context.Background(), job)
	require.Empty(t, out.Err)
	require.Len(t, out.Results, 3)
	require.Equal(t, job.Commands, sentConfigLines(ios, job))
	require.Equal(t, []string{"interface GigabitEthernet0/0=ok", "ip address 10.0.0.1 255.255.255.0=ok", "no shutdown=ok"}, statuses(t, a, ref))
	require.Contains(t, strings.Join(ios.InterfaceConfig("GigabitEthernet0/0"), "\n"), "ip address 10.0.0.1 255.255.255.0")

	// The activity is retried (say its completion was lost): nothing is sent twice.
	again := a.deviceRunner(ref).RunDevice(context.Background(), job)
	require.Empty(t, again.Err)
	require.Len(t, again.Results, 3)
	require.Equal(t, job.Commands, sentConfigLines(ios, job), "no line went out a second time")
}

func TestAWorkerThatDiedMidLineDoesNotResendIt(t *testing.T) {
	a, ios, job, ref := deviceFixture(t)
	runner := a.deviceRunner(ref)
	// What a worker killed while sending the second line leaves behind.
	ctx := context.Background()
	first := runner.record(job, 0, job.Commands[0], models.CommandOK)
	require.NoError(t, a.DeviceRecords.Save(ctx, first))
	require.NoError(t, a.DeviceRecords.Save(ctx, runner.record(job, 1, job.Commands[1], models.CommandSent)))
	require.NoError(t, a.DeviceRecords.Save(ctx, runner.record(job, 2, job.Commands[2], models.CommandQueued)))

	out := runner.RunDevice(ctx, job)
	require.Empty(t, sentConfigLines(ios, job), "neither the uncertain line nor what depends on it is sent")
	// The device was read back (recorded first, in its own slot) and could not tell.
	require.Equal(t, []string{"show running-config=ok", "interface GigabitEthernet0/0=ok", "ip address 10.0.0.1 255.255.255.0=unknown", "no shutdown=skipped"}, statuses(t, a, ref))
	item := tools.DeviceResult(tools.DevicePlan{Jobs: []tools.DeviceJob{job}}, []tools.DeviceOutcome{out}).Data[0]
	require.Equal(t, tools.StatusFailed, item.Status)
	require.Contains(t, item.Error, "check whether it took effect")
}

// The line on its way when the worker died did take effect: the read-back shows it, so it is
// recorded as applied, not sent again, and the job goes on with the lines after it.
func TestALineThatTookEffectBeforeTheCrashIsVerifiedAndTheRestIsSent(t *testing.T) {
	a, ios, job, ref := deviceFixture(t)
	ctx := context.Background()
	// The device already holds the address, as if the dying worker's line had gone through.
	s, err := devices.Connect(ctx, devices.Target(job.Target), "", devices.Options{})
	require.NoError(t, err)
	_, err = s.Configure(ctx, job.Commands[:2])
	require.NoError(t, err)
	require.NoError(t, s.Close())
	before := len(ios.Lines())

	runner := diedSendingTheSecondLine(t, a, ref, job)
	out := runner.RunDevice(ctx, job)
	require.Empty(t, out.Err)
	require.Equal(t, []string{"show running-config=ok", "interface GigabitEthernet0/0=ok",
		"ip address 10.0.0.1 255.255.255.0=applied", "no shutdown=ok"}, statuses(t, a, ref))
	var resent []string
	for _, l := range ios.Lines()[before:] {
		if slices.Contains(job.Commands, strings.TrimSpace(l)) {
			resent = append(resent, strings.TrimSpace(l))
		}
	}
	require.Equal(t, []string{"interface GigabitEthernet0/0", "no shutdown"}, resent,
		"the section is entered again and only the line that never went out is sent; the applied one is not sent twice")
	item := tools.DeviceResult(tools.DevicePlan{Jobs: []tools.DeviceJob{job}}, []tools.DeviceOutcome{out}).Data[0]
	require.Equal(t, tools.StatusSuccess, item.Status)
	require.Contains(t, item.Result, "verified after restart")
}

func TestReadOnlyCommandsInterruptedByACrashAreSentAgain(t *testing.T) {
	a, ios, job, ref := deviceFixture(t)
	job.Config = false
	job.Commands = []string{"show ip interface brief"}
	ref.ToolName = tools.ShowCommandsTool
	runner := a.deviceRunner(ref)
	require.NoError(t, a.DeviceRecords.Save(context.Background(), runner.record(job, 0, job.Commands[0], models.CommandSent)))
	out := runner.RunDevice(context.Background(), job)
	require.Empty(t, out.Err)
	require.Len(t, out.Results, 1)
	require.Contains(t, out.Results[0].Output, "GigabitEthernet0/0")
	require.Contains(t, ios.Lines(), "show ip interface brief")
}

func TestABusyDeviceIsReportedNotRetriedForever(t *testing.T) {
	a, _, job, ref := deviceFixture(t)
	a.Devices.Locker = devices.NewMemoryLocker(50 * time.Millisecond)
	a.Metrics = metrics.New()
	unlock, err := a.Devices.Locker.Lock(context.Background(), devices.Target(job.Target).LockKey(), time.Minute)
	require.NoError(t, err)
	defer unlock()
	out := a.deviceRunner(ref).RunDevice(context.Background(), job)
	require.Contains(t, out.Err, "busy")
	require.Empty(t, out.Results)
	require.Equal(t, 1.0, metricValue(t, a.Metrics, "gns3_copilot_console_lock_wait_seconds", map[string]string{"outcome": "busy"}))
}

// A command whose "about to send" record cannot be written is not sent: the database refuses
// every new record (a trigger, as a full disk or a lost connection would), the device gets no
// line, and the activity fails so that Temporal retries it.
func TestACommandThatCannotBeRecordedIsNotSent(t *testing.T) {
	a, ios, job, ref := deviceFixture(t)
	require.NoError(t, a.DeviceRecords.DB.Exec(`CREATE TRIGGER refuse_records BEFORE INSERT ON device_commands
		BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`).Error)

	out := a.deviceRunner(ref).RunDevice(context.Background(), job)
	require.Contains(t, out.Err, "not sent")
	require.Empty(t, sentConfigLines(ios, job), "no configuration line reached the device")

	err := a.RunDevice(context.Background(), workflows.DeviceInput{Turn: ref, Job: job})
	require.ErrorContains(t, err, "could not be recorded first")
	require.Empty(t, sentConfigLines(ios, job))

	// Show commands too.
	job.Config, job.Commands, ref.ToolName = false, []string{"show ip interface brief"}, tools.ShowCommandsTool
	out = a.deviceRunner(ref).RunDevice(context.Background(), job)
	require.Contains(t, out.Err, "not sent")
	require.NotContains(t, ios.Lines(), "show ip interface brief")

	// Once the database writes again, the retry sends and records everything.
	require.NoError(t, a.DeviceRecords.DB.Exec(`DROP TRIGGER refuse_records`).Error)
	out = a.deviceRunner(ref).RunDevice(context.Background(), job)
	require.Empty(t, out.Err)
	require.Contains(t, ios.Lines(), "show ip interface brief")
}

// Two attempts of one device activity can overlap (a retry starts while the attempt it
// replaces still runs). Here the other attempt takes the second line over right after this one
// queued it: this attempt sends the first line, leaves the second (and what follows) to the
// other one, writes nothing over its record, and fails so that Temporal retries it.
func TestALineAnotherAttemptTookOverIsNotSentTwice(t *testing.T) {
	a, ios, job, ref := deviceFixture(t)
	require.NoError(t, a.DeviceRecords.DB.Exec(`CREATE TRIGGER rival_attempt AFTER INSERT ON device_commands
		WHEN NEW.seq = 1 AND NEW.status = 'queued'
		BEGIN UPDATE device_commands SET status = 'sent' WHERE id = NEW.id; END`).Error)

	err := a.RunDevice(context.Background(), workflows.DeviceInput{Turn: ref, Job: job})
	require.ErrorContains(t, err, "another attempt")
	require.Equal(t, job.Commands[:1], sentConfigLines(ios, job), "only the line this attempt claimed went out")
	require.Equal(t, []string{"interface GigabitEthernet0/0=ok", "ip address 10.0.0.1 255.255.255.0=sent", "no shutdown=queued"}, statuses(t, a, ref),
		"the other attempt's record is left as it wrote it")

	// The retry finds the line on its way and reads the device back; as after a crash, a line
	// the read-back cannot vouch for is not sent again, nor what follows it.
	a.deviceRunner(ref).RunDevice(context.Background(), job)
	require.Equal(t, job.Commands[:1], sentConfigLines(ios, job), "no line went out twice")
}
