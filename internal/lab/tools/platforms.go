package tools

import (
	"context"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
)

// nodeTarget is everything GNS3 says of a node that tells the console driver its platform.
func nodeTarget(n *gns3.Node, templateName string) devices.Target {
	t := devices.Target{NodeID: n.NodeID, Name: n.Name, NodeType: n.NodeType, Tags: n.Tags, TemplateName: templateName,
		ConsoleType: n.ConsoleType, ConsoleHost: n.ConsoleHost, ConsolePort: n.ConsolePort()}
	var images []string
	for _, key := range imageProperties {
		if img, ok := n.Properties[key].(string); ok && strings.TrimSpace(img) != "" {
			images = append(images, strings.TrimSpace(img))
		}
	}
	t.Image = strings.Join(images, " ")
	return t
}

// LabPlatforms lists the platforms of a project's nodes, as far as what GNS3 says of them
// tells (the template list is read only when a node's own fields do not decide it), each
// once, in the order of the nodes. Nodes that only their console prompt would tell are left
// out.
func LabPlatforms(ctx context.Context, client *gns3.Client, s *livetopo.Snapshot) []string {
	if s == nil {
		return nil
	}
	var templates map[string]string
	seen := map[string]bool{}
	var out []string
	for i := range s.Nodes {
		n := &s.Nodes[i]
		p, err := devices.DetectPlatform(nodeTarget(n, ""))
		if err != nil && n.TemplateID != "" && client != nil {
			if templates == nil {
				templates = map[string]string{}
				if ts, err := client.ListTemplates(ctx); err == nil {
					for _, t := range ts {
						templates[t.TemplateID] = t.Name
					}
				}
			}
			p, err = devices.DetectPlatform(nodeTarget(n, templates[n.TemplateID]))
		}
		if err == nil && !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, p.Name)
		}
	}
	return out
}
