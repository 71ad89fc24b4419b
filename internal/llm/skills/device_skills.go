package skills

import (
	"fmt"
	"path"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
)

// maxDeviceContext bounds what one platform's device skill adds to a prompt.
const maxDeviceContext = 8 << 10

// DeviceSkill is what a GNS3-layout directory says about one device type: its base file and
// its topic files (device/<name>/<topic>.yaml), rendered once as text for the prompt.
type DeviceSkill struct {
	DeviceType string
	Name       string
	Platform   string
	Topics     []string
	Files      []string
	// Context is the text added to the prompt of a turn whose lab has this platform.
	Context string
}

// deviceTypePlatforms maps GNS3's device types to our console profiles where the names differ.
var deviceTypePlatforms = map[string]string{
	"frr_vtysh": "frr", "gns3_vpcs_telnet": "vpcs", "gns3_linux_docker": "linux",
	"cisco_iou_telnet": "cisco_ios", "cisco_ios_telnet": "cisco_ios",
}

// platformOf finds our profile for a device type: by the table, by its name, or by its name
// without a connection suffix ("arista_eos_telnet" is arista_eos).
func platformOf(deviceType string) string {
	if p, ok := deviceTypePlatforms[deviceType]; ok {
		return p
	}
	for _, name := range []string{deviceType, strings.TrimSuffix(strings.TrimSuffix(deviceType, "_telnet"), "_ssh")} {
		if p, err := devices.ProfileByName(name); err == nil {
			return p.Name
		}
	}
	return ""
}

type deviceDoc struct {
	rel   string
	root  *yaml.Node
	topic string
}

// deviceFiles reads device/: single files, and folders of a _base.yaml and topic files.
func (l *loader) deviceFiles() {
	byType := map[string][]deviceDoc{}
	var order []string
	for _, rel := range l.yamlFiles("device") {
		root, ok := l.yaml(rel)
		if !ok {
			continue
		}
		base := strings.TrimSuffix(strings.TrimSuffix(path.Base(rel), ".yaml"), ".yml")
		inFolder := strings.Count(rel, "/") > 1
		topicFile := inFolder && base != "_base"
		need := []string{"device_type", "name"}
		if topicFile {
			need = append(need, "topic")
			for _, k := range []string{"topics", "category"} {
				if f := field(root, k); f != nil {
					l.badAt(rel, f, "a topic file must not define %s (only its _base.yaml does)", k)
				}
			}
		}
		if !l.required(rel, root, root, "the file", need...) {
			continue
		}
		typ, _ := text(root, "device_type")
		topic, _ := text(root, "topic")
		if byType[typ] == nil {
			order = append(order, typ)
		}
		byType[typ] = append(byType[typ], deviceDoc{rel: rel, root: root, topic: topic})
	}
	l.set.Devices = map[string]DeviceSkill{}
	for _, typ := range order {
		l.deviceSkill(typ, byType[typ])
	}
}

func (l *loader) deviceSkill(typ string, docs []deviceDoc) {
	platform := platformOf(typ)
	if platform == "" {
		l.set.Unmatched = append(l.set.Unmatched, typ)
		return
	}
	sort.SliceStable(docs, func(i, j int) bool { return docs[i].topic == "" && docs[j].topic != "" })
	ds := DeviceSkill{DeviceType: typ, Platform: platform}
	var b strings.Builder
	for _, d := range docs {
		ds.Files = append(ds.Files, d.rel)
		if d.topic == "" {
			ds.Name, _ = text(d.root, "name")
			fmt.Fprintf(&b, "### %s (%s)\n", ds.Name, typ)
		} else {
			ds.Topics = append(ds.Topics, d.topic)
			name, _ := text(d.root, "name")
			fmt.Fprintf(&b, "#### Topic %s: %s\n", d.topic, name)
		}
		renderMapping(&b, d.root, 0, map[string]bool{"name": true, "device_type": true, "category": true, "topic": true})
	}
	ds.Context = cutContext(b.String(), typ)
	// Several device types may run on one platform (IOS and IOL on cisco_ios): the platform's
	// context holds them all, within the one bound (two types of 6 KB each added 12 KB).
	if prev, ok := l.set.Devices[platform]; ok {
		ds.DeviceType, ds.Name = prev.DeviceType+", "+ds.DeviceType, prev.Name+", "+ds.Name
		ds.Topics, ds.Files = append(prev.Topics, ds.Topics...), append(prev.Files, ds.Files...)
		ds.Context = cutContext(prev.Context+ds.Context, typ)
	}
	l.set.Devices[platform] = ds
}

// cutContext cuts a device context at the last line break within maxDeviceContext, and says
// so in words naming typ.
func cutContext(context, typ string) string {
	if len(context) <= maxDeviceContext {
		return context
	}
	cut := strings.LastIndex(context[:maxDeviceContext], "\n")
	return context[:cut+1] + fmt.Sprintf("… (%s is cut here; the rest of its skill is not shown)\n", typ)
}

// renderMapping writes a mapping as indented "key: value" lines, in the file's order.
func renderMapping(b *strings.Builder, m *yaml.Node, depth int, skip map[string]bool) {
	// What goes beyond maxDeviceContext is cut from the context anyway, and writing it is
	// quadratic in the nesting: a 45 KB file of mappings nested 9000 deep (YAML allows 10000)
	// wrote 557 MB of indentation before the cut.
	if b.Len() > maxDeviceContext {
		return
	}
	pad := strings.Repeat("  ", depth)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if b.Len() > maxDeviceContext {
			return
		}
		k, v := m.Content[i].Value, m.Content[i+1]
		if skip[k] {
			continue
		}
		switch v.Kind {
		case yaml.ScalarNode:
			fmt.Fprintf(b, "%s%s: %s\n", pad, k, oneLine(v.Value))
		case yaml.SequenceNode:
			fmt.Fprintf(b, "%s%s:\n", pad, k)
			for _, item := range v.Content {
				if item.Kind == yaml.MappingNode {
					fmt.Fprintf(b, "%s  -\n", pad)
					renderMapping(b, item, depth+2, nil)
				} else {
					fmt.Fprintf(b, "%s  - %s\n", pad, oneLine(item.Value))
				}
			}
		case yaml.MappingNode:
			fmt.Fprintf(b, "%s%s:\n", pad, k)
			renderMapping(b, v, depth+1, nil)
		}
	}
}

// oneLine keeps a multi-line value (a configuration block) readable on one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")
}

// DeviceContext is what the skills say about the given platforms, for a turn's prompt ("" when
// they say nothing about any of them).
func (s *Set) DeviceContext(platforms []string) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, p := range platforms {
		ds, ok := s.Devices[p]
		if !ok || seen[p] {
			continue
		}
		seen[p] = true
		b.WriteString(ds.Context)
	}
	return b.String()
}
