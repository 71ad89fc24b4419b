package activities

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/credentials"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/vpcslab"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// savePointLab is the fake GNS3 with two started VPCS whose consoles are real vpcs processes,
// and the activities that act on it for user alice (or, for a real GNS3, its own account).
type savePointLab struct {
	a     *Activities
	g     *fakegns3.Server
	vpcs  *vpcslab.Lab
	ref   workflows.WorkRef
	token string
}

func newSavePointLab(t *testing.T) *savePointLab {
	t.Helper()
	vl := vpcslab.Start(t, 2)
	g := fakegns3.New(t)
	g.AddUser("alice", "alice-token", false)
	pid := g.AddProject("lab", fakegns3.Members("alice"))
	for i, n := range vl.Nodes {
		nd := g.AddNode(pid, fakegns3.NodeSpec{Name: n.Name, X: i * 100, Status: "started"})
		g.SetConsole(nd.ID, "127.0.0.1", n.ConsolePort)
	}
	l := newSavePointActivities(t, g.URL, "alice-token")
	l.g, l.vpcs, l.ref.ProjectID = g, vl, pid
	return l
}

// newSavePointActivities are the activities a save point needs, on the GNS3 at url, with the
// turn's credential token.
func newSavePointActivities(t *testing.T, url, token string) *savePointLab {
	t.Helper()
	db, err := models.Open("sqlite:"+filepath.Join(t.TempDir(), "t.db"), "")
	require.NoError(t, err)
	require.NoError(t, models.Migrate(db))
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{7}, credentials.KeySize))
	require.NoError(t, err)
	creds, err := credentials.NewDBStore(db, sealer)
	require.NoError(t, err)
	ref := workflows.WorkRef{SessionID: "s1", TurnID: "t1", UserID: "alice", Mode: domain.ModeLabAutomation}
	require.NoError(t, creds.Put(context.Background(), ref.TurnID, token, time.Hour))
	a := &Activities{Credentials: creds, GNS3: gns3.NewServer(url, 30*time.Second), Tools: tools.NewRegistry(tools.AllTools()...),
		Events: relay.NewMemory(relay.MemoryOptions{}), DeviceRecords: models.DeviceRepository{DB: db},
		SavePoints: models.SavePointRepository{DB: db}, Devices: DeviceAccess{Policy: devices.DefaultPolicy()}}
	return &savePointLab{a: a, ref: ref, token: token}
}

func (l *savePointLab) vpcsRun(t *testing.T, i int, cmd string) string {
	t.Helper()
	s, err := devices.Open(t.Context(), l.vpcs.Nodes[i].Addr(), nil, devices.Options{})
	require.NoError(t, err)
	defer s.Close()
	r, err := s.Run(t.Context(), cmd)
	require.NoError(t, err)
	return r.Output
}

func (l *savePointLab) plan(t *testing.T, name string) workflows.SavePointInput {
	t.Helper()
	in := workflows.SavePointInput{Turn: l.ref, Call: workflows.ToolCall{ID: "c1", Name: domain.CreateSnapshotTool}, Injection: true}
	env := tools.Env{ProjectID: l.ref.ProjectID, GNS3: l.a.GNS3.WithToken(l.token), Attempt: 1}
	p, err := tools.PlanSavePoint(t.Context(), env, []byte(`{"name":"`+name+`"}`))
	require.NoError(t, err)
	in.Name, in.Running = p.Name, p.Running
	return in
}

// The save point's steps on real VPCS: each PC saves its address (startup.vpc) and is read back,
// the pause stops both, takes the snapshot and starts them again with their consoles answering,
// and the save point is found again by the snapshot, with what each PC saved. Restored, the PCs
// are started again by name (new ids) and read back against what they saved.
func TestSavePointOnRealVPCSThenRestore(t *testing.T) {
	l := newSavePointLab(t)
	l.vpcsRun(t, 0, "ip 10.44.0.1/24 10.44.0.254")
	l.vpcsRun(t, 1, "ip 10.44.0.2/24")
	in := l.plan(t, "before")
	require.Len(t, in.Running, 2)

	saved, err := l.a.SaveDevicesForSavePoint(t.Context(), in)
	require.NoError(t, err)
	require.Empty(t, saved.Refused)
	startup, err := readFile(filepath.Join(l.vpcs.Nodes[0].Dir, "startup.vpc"))
	require.NoError(t, err)
	require.Contains(t, startup, "ip 10.44.0.1 10.44.0.254 24")

	paused, err := l.a.PauseForSavePoint(t.Context(), in)
	require.NoError(t, err)
	require.Empty(t, paused.Refused)
	require.Empty(t, paused.NotBack)
	require.NotEmpty(t, paused.SnapshotID)
	require.Positive(t, paused.PausedMS)
	require.Equal(t, 2, l.g.Count(fakegns3.OpStopNode))
	for _, n := range l.g.Nodes(l.ref.ProjectID) {
		require.Equal(t, "started", n.Status, n.Name)
	}
	snaps := l.g.Snapshots(l.ref.ProjectID)
	require.Len(t, snaps, 1)

	sp, err := l.a.SavePoints.ForSnapshot(t.Context(), l.ref.ProjectID, "before", snaps[0].CreatedAt)
	require.NoError(t, err)
	devs := sp.DeviceList()
	require.Len(t, devs, 2)
	require.True(t, devs[0].Saved)
	require.Equal(t, "save", devs[0].SaveCommand)
	require.Contains(t, devs[0].Config, "10.44.0.1/24")

	sum := summarizeSavePoint(workflows.SavePointFinish{SavePointInput: in, Saved: &saved, Paused: &paused}, devs)
	require.True(t, sum.taken)
	require.Contains(t, sum.message, `Snapshot "before" taken. The lab was paused for `)
	require.Contains(t, sum.message, "saved first: PC1 (save), PC2 (save)")
	res := sum.result()
	require.True(t, res.Success, res.JSON())
	require.Equal(t, 2, res.Metadata["nodes_paused"])
	require.Contains(t, sum.injectionNote(), "PC1, PC2 saved their configuration and were paused for")

	// A retried pause that finds its snapshot taken stops nothing again.
	retried, err := l.a.pauseAttempt(t.Context(), in, 2)
	require.NoError(t, err)
	require.Equal(t, paused.SnapshotID, retried.SnapshotID)
	require.Equal(t, 2, l.g.Count(fakegns3.OpStopNode), "the retry found the snapshot and stopped nothing")

	// PC1 is broken, then the snapshot restored: both come back by name and are read back.
	l.vpcsRun(t, 0, "ip 10.44.0.99/24")
	env := tools.Env{ProjectID: l.ref.ProjectID, GNS3: l.a.GNS3.WithToken("alice-token"), Attempt: 1}
	r := l.a.Tools.Execute(t.Context(), env, tools.LabAutomation, tools.RestoreSnapshotTool, `{"snapshot":"before"}`)
	require.True(t, r.Success, r.JSON())
	r, report := l.a.afterRestore(t.Context(), env, workflows.ToolCallRef{WorkRef: l.ref, CallID: "c2", ToolName: tools.RestoreSnapshotTool}, r)
	require.True(t, report.Known)
	for _, n := range l.g.Nodes(l.ref.ProjectID) {
		require.Equal(t, "started", n.Status, "%s runs again", n.Name)
	}
	require.Len(t, report.Devices, 2)
	// The fake restores no process: the real vpcs behind PC1 kept the fault, and the read-back
	// says so; PC2 is as it saved.
	require.False(t, report.Devices[0].Back)
	require.Contains(t, report.Devices[0].Text, "it reads 10.44.0.99/24")
	require.Contains(t, report.Devices[0].Text, "it saved 10.44.0.1/24, gateway 10.44.0.254")
	require.True(t, report.Devices[1].Back, report.Devices[1].Text)
	require.Contains(t, report.Devices[1].Text, "runs again with the addresses it saved: 10.44.0.2/24")
	require.False(t, r.Success, "a device that is not back as saved fails its item")
	require.Contains(t, r.Data[0].Result, "The 2 node(s) that ran when the snapshot was taken were started again")
	require.Contains(t, report.Summary(), "PC2 came back as saved; PC1 did not.")

	// A snapshot the copilot did not take while nodes ran: nothing is started, and it says so.
	for _, n := range l.g.Nodes(l.ref.ProjectID) {
		l.g.SetStatus(n.ID, "stopped")
	}
	l.g.TakeSnapshot(l.ref.ProjectID, "by-hand")
	r = l.a.Tools.Execute(t.Context(), env, tools.LabAutomation, tools.RestoreSnapshotTool, `{"snapshot":"by-hand"}`)
	_, report = l.a.afterRestore(t.Context(), env, workflows.ToolCallRef{WorkRef: l.ref, CallID: "c3", ToolName: tools.RestoreSnapshotTool}, r)
	require.False(t, report.Known)
	require.Contains(t, report.Summary(), "start them with start_gns3_node")
}

// A node that cannot be stopped: no snapshot, the hung node named, the other started again and
// answering; the lab runs as it did.
func TestSavePointWithANodeThatDoesNotStop(t *testing.T) {
	l := newSavePointLab(t)
	l.a.GNS3 = gns3.NewServer(l.g.URL, 500*time.Millisecond)
	in := l.plan(t, "before")
	pc2, _ := l.g.NodeByName(l.ref.ProjectID, "PC2")
	l.g.Hang(fakegns3.OpStopNode, pc2.ID)
	paused, err := l.a.PauseForSavePoint(t.Context(), in)
	require.NoError(t, err)
	require.Contains(t, paused.Refused, "No snapshot was taken: PC2 could not be stopped (it did not stop within")
	require.Contains(t, paused.Refused, "PC1, stopped meanwhile, run again with the configuration they saved and their consoles answer")
	require.Empty(t, l.g.Snapshots(l.ref.ProjectID))
	for _, n := range l.g.Nodes(l.ref.ProjectID) {
		require.Equal(t, "started", n.Status, n.Name)
	}
	_, err = l.a.SavePoints.Get(t.Context(), workflows.SavePointID(l.ref.TurnID, in.Call.ID))
	require.ErrorIs(t, err, models.ErrNotFound, "no save point without a snapshot (the save step was not run here)")
}

// A node that started after the plan was not saved: the pause stops nothing and says so.
func TestSavePointRefusesANodeStartedSinceThePlan(t *testing.T) {
	l := newSavePointLab(t)
	pc2, _ := l.g.NodeByName(l.ref.ProjectID, "PC2")
	l.g.SetStatus(pc2.ID, "stopped")
	in := l.plan(t, "before")
	require.Len(t, in.Running, 1)
	l.g.SetStatus(pc2.ID, "started")
	paused, err := l.a.PauseForSavePoint(t.Context(), in)
	require.NoError(t, err)
	require.Contains(t, paused.Refused, "PC2 started since the configurations were saved")
	require.Zero(t, l.g.Count(fakegns3.OpStopNode))
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}
