package tools

import (
	"context"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
)

// TopologyReader is the live topology (package livetopo): the project as the user behind c may
// see it, from memory while that copy is current and from GNS3 otherwise.
type TopologyReader interface {
	Read(ctx context.Context, c *gns3.Client, projectID string) (*livetopo.Snapshot, error)
}

// loadTopology resolves names and ports against the live topology when there is one, saving a
// project, node and link read per tool call.
func loadTopology(ctx context.Context, env Env) (*topology, error) {
	if env.Topology == nil {
		return readTopology(ctx, env.GNS3, env.ProjectID)
	}
	s, err := env.Topology.Read(ctx, env.GNS3, env.ProjectID)
	if err != nil {
		return nil, err
	}
	return fromSnapshot(s), nil
}

func fromSnapshot(s *livetopo.Snapshot) *topology {
	p := s.Project
	t := &topology{project: &p, nodes: s.Nodes, links: s.Links}
	t.index()
	return t
}

// SnapshotContext renders a snapshot as the system prompt's project text (see ProjectContext).
func SnapshotContext(s *livetopo.Snapshot, gns3Host string) string {
	return fromSnapshot(s).context(gns3Host)
}
