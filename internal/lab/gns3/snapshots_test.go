package gns3_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
)

func TestSnapshotsCreateListRestoreDelete(t *testing.T) {
	fake, c, pid := setup(t)
	ctx := context.Background()
	a := fake.AddNode(pid, fakegns3.NodeSpec{Name: "PC1", Status: gns3.NodeStarted})
	b := fake.AddNode(pid, fakegns3.NodeSpec{Name: "PC2"})
	fake.AddLink(pid, a.ID, 0, 0, b.ID, 0, 0)

	// GNS3 exports a project to snapshot it, and refuses while a node runs.
	_, err := c.CreateSnapshot(ctx, pid, "before")
	var refusal *gns3.APIError
	if !errors.Is(err, gns3.ErrConflict) || !errors.As(err, &refusal) || !strings.Contains(refusal.Message, "must be stopped") {
		t.Fatalf("a snapshot while PC1 runs: %v", err)
	}
	if err := c.StopNode(ctx, pid, a.ID); err != nil {
		t.Fatal(err)
	}
	s, err := c.CreateSnapshot(ctx, pid, "before")
	if err != nil || s.Name != "before" || s.ProjectID != pid || s.SnapshotID == "" || s.Created().IsZero() {
		t.Fatalf("create: %v %+v", err, s)
	}
	if _, err := c.CreateSnapshot(ctx, pid, "before"); !errors.Is(err, gns3.ErrConflict) {
		t.Fatalf("a second snapshot of the same name: %v", err)
	}
	list, err := c.ListSnapshots(ctx, pid)
	if err != nil || len(list) != 1 || list[0] != *s {
		t.Fatalf("list: %v %+v", err, list)
	}
	p, err := c.RestoreSnapshot(ctx, pid, s.SnapshotID)
	if err != nil || p.ProjectID != pid || p.Status != gns3.ProjectOpened {
		t.Fatalf("restore: %v %+v", err, p)
	}
	nodes, _ := c.ListNodes(ctx, pid)
	if len(nodes) != 2 || nodes[0].Name != "PC1" || nodes[0].NodeID == a.ID || nodes[0].Status != gns3.NodeStopped {
		t.Fatalf("nodes after restore: %+v", nodes)
	}
	if _, err := c.RestoreSnapshot(ctx, pid, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, gns3.ErrNotFound) {
		t.Fatalf("restore of an unknown snapshot: %v", err)
	}
	// GNS3 reopens the project to restore it, which gives its snapshots new ids.
	list, err = c.ListSnapshots(ctx, pid)
	if err != nil || len(list) != 1 || list[0].Name != "before" || list[0].SnapshotID == s.SnapshotID {
		t.Fatalf("list after restore: %v %+v", err, list)
	}
	if err := c.DeleteSnapshot(ctx, pid, list[0].SnapshotID); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.ListSnapshots(ctx, pid); len(list) != 0 {
		t.Fatalf("after delete: %+v", list)
	}
}

func TestLinkFilters(t *testing.T) {
	fake, c, pid := setup(t)
	ctx := context.Background()
	a := fake.AddNode(pid, fakegns3.NodeSpec{})
	b := fake.AddNode(pid, fakegns3.NodeSpec{})
	l := fake.AddLink(pid, a.ID, 0, 0, b.ID, 0, 0)

	fs, err := c.AvailableFilters(ctx, pid, l.ID)
	if err != nil || len(fs) != 5 {
		t.Fatalf("available filters: %v %+v", err, fs)
	}
	delay := fs[2]
	if delay.Type != gns3.FilterDelay || len(delay.Parameters) != 2 || *delay.Parameters[0].Minimum != 0 ||
		*delay.Parameters[1].Maximum != 32767 || delay.Parameters[0].Unit != "ms" || fs[4].Parameters[0].Type != "text" {
		t.Fatalf("delay filter: %+v", delay)
	}
	suspend := true
	got, err := c.UpdateLink(ctx, pid, l.ID, gns3.LinkUpdate{
		Filters: &gns3.LinkFilters{gns3.FilterDelay: {200, 20}, gns3.FilterPacketLoss: {30}}, Suspend: &suspend})
	if err != nil || !got.Suspend || fmt.Sprint(got.Filters) != "map[delay:[200 20] packet_loss:[30]]" {
		t.Fatalf("update: %v %+v", err, got)
	}
	got, err = c.UpdateLink(ctx, pid, l.ID, gns3.LinkUpdate{Filters: &gns3.LinkFilters{}})
	if err != nil || !got.Suspend || len(got.Filters) != 0 {
		t.Fatalf("clearing the filters only: %v %+v", err, got)
	}
}
