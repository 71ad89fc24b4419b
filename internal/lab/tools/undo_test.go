package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

const (
	undoFresh = "NAME        : PC1[1]\nIP/MASK     : 0.0.0.0/0\nGATEWAY     : 0.0.0.0\nDNS         :\n"
	undoWeb   = "NAME        : web[1]\nIP/MASK     : 10.1.0.5/24\nGATEWAY     : 0.0.0.0\nDNS         :\n"
)

// An undo's plan finds the job's devices by name (a restored snapshot gave them new ids) and
// keeps the ids the job knew; a device that is gone, stopped or was not read fails in the plan
// and says why; one the job left alone needs nothing.
func TestPlanUndoResolvesByNameAndExplainsWhatItCannotUndo(t *testing.T) {
	l := newLab(t)
	pc1 := l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC1", Status: "started"})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC2", Status: "stopped", X: 300})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC3", Status: "started", X: 600})
	l.fake.AddNode(l.pid, fakegns3.NodeSpec{Name: "PC4", Status: "started", X: 900})
	src := UndoSource{JobID: "job-1", Devices: []UndoDevice{
		{NodeID: "old-pc1", Name: "PC1", ReadCommand: "show ip", Before: undoFresh, After: undoWeb},
		{NodeID: "old-pc2", Name: "PC2", ReadCommand: "show ip", Before: undoFresh, After: undoWeb},
		{NodeID: "old-pc3", Name: "PC3", ReadCommand: "show ip", Before: undoFresh, After: undoFresh},
		{NodeID: "old-pc4", Name: "PC4", Problem: "its configuration was not read after the job"},
		{NodeID: "old-pc9", Name: "PC9", ReadCommand: "show ip", Before: undoFresh, After: undoWeb},
	}}
	plan, fail := PlanUndo(context.Background(), l.env, src, nil, nil)
	require.Nil(t, fail)
	require.Len(t, plan.Jobs, 1)
	job := plan.Jobs[0]
	require.Equal(t, pc1.ID, job.NodeID)
	require.Equal(t, "vpcs", job.Platform)
	require.False(t, job.Config, "VPCS has no configuration mode")
	require.Equal(t, []string{"clear ip", "set pcname PC1"}, job.Commands)
	require.Equal(t, "job-1", plan.Undo.JobID)
	require.Equal(t, map[string]string{pc1.ID: "old-pc1"}, plan.Undo.Nodes)

	byName := map[string]Item{}
	for _, it := range plan.Failed {
		byName[it.Name] = it
	}
	require.Contains(t, byName["PC2"].Error, "PC2 is stopped; start it first")
	require.Equal(t, StatusSuccess, byName["PC3"].Status)
	require.Contains(t, byName["PC3"].Result, "nothing to undo")
	require.Contains(t, byName["PC4"].Error, "its configuration was not read after the job")
	require.Contains(t, byName["PC9"].Error, "PC9 is not in the project any more")

	_, fail = PlanUndo(context.Background(), l.env, src, []string{"PC1", "R7"}, nil)
	require.NotNil(t, fail)
	require.Equal(t, "job job-1 has no device R7; its devices are: PC1, PC2, PC3, PC4, PC9", fail.Error)

	plan, fail = PlanUndo(context.Background(), l.env, src, []string{"pc1"}, nil)
	require.Nil(t, fail)
	require.Len(t, plan.Jobs, 1)
	require.Empty(t, plan.Failed, "only the devices named")
}

// The undo tool is in the one catalogue, for lab automation only, and never runs as one call.
func TestUndoToolIsALabAutomationConfigurationTool(t *testing.T) {
	reg := NewRegistry(AllTools()...)
	tool, ok := reg.Lookup(UndoConfigTool)
	require.True(t, ok)
	require.Equal(t, []Mode{LabAutomation}, tool.Modes())
	require.True(t, tool.Mutating())
	_, runs := tool.(Runner)
	require.False(t, runs, "an undo runs only as a configuration job")
	_, err := DecodeUndoArgs(Env{ProjectID: "p"}, []byte(`{"job":"x","devices":["R1"]}`))
	require.ErrorContains(t, err, "devices")
	a, err := DecodeUndoArgs(Env{ProjectID: "p"}, []byte(`{"job":" config-job-1 ","device_names":["R1"]}`))
	require.NoError(t, err)
	require.Equal(t, "config-job-1", a.Job)
	_, err = DecodeUndoArgs(Env{ProjectID: "p"}, []byte(`{"device_names":[`+strings.Repeat(`"R",`, 100)+`"R"]}`))
	require.ErrorContains(t, err, "at most 100 devices")
}
