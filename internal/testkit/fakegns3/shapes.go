package fakegns3

import (
	_ "embed"
	"encoding/json"
	"strings"
)

// templates.json is a verbatim copy of shared/gns3/samples/v3.0.6/templates.json.
//
//go:embed templates.json
var templatesJSON []byte

type builtinTemplate struct {
	TemplateID        string `json:"template_id"`
	Name              string `json:"name"`
	Category          string `json:"category"`
	DefaultNameFormat string `json:"default_name_format"`
	Symbol            string `json:"symbol"`
	TemplateType      string `json:"template_type"`
	ConsoleType       string `json:"console_type"`
	extra             map[string]any
}

func builtinTemplates() []builtinTemplate {
	var raws []json.RawMessage
	if err := json.Unmarshal(templatesJSON, &raws); err != nil {
		panic("fakegns3: embedded templates.json: " + err.Error())
	}
	out := make([]builtinTemplate, 0, len(raws))
	for _, r := range raws {
		var b builtinTemplate
		if err := json.Unmarshal(r, &b); err != nil {
			panic("fakegns3: embedded templates.json: " + err.Error())
		}
		if err := json.Unmarshal(r, &b.extra); err != nil {
			panic("fakegns3: embedded templates.json: " + err.Error())
		}
		out = append(out, b)
	}
	return out
}

// templateJSON answers a template the way GNS3 lists it: the built-in ones
// exactly as captured, the others with the common fields.
func templateJSON(t *template) any {
	if t.Extra != nil {
		return t.Extra
	}
	return map[string]any{
		"template_id":         t.ID,
		"name":                t.Name,
		"category":            t.Category,
		"default_name_format": t.NameFormat,
		"symbol":              t.Symbol,
		"template_type":       t.Type,
		"compute_id":          t.ComputeID,
		"builtin":             t.Builtin,
		"console_type":        t.ConsoleType,
	}
}

type userOut struct {
	Username     string  `json:"username"`
	IsActive     bool    `json:"is_active"`
	Email        *string `json:"email"`
	FullName     *string `json:"full_name"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
	UserID       string  `json:"user_id"`
	LastLogin    string  `json:"last_login"`
	IsSuperadmin bool    `json:"is_superadmin"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func userJSON(u *user) userOut {
	return userOut{
		Username: u.name, IsActive: true, Email: nullable(u.email), FullName: nullable(u.fullName),
		CreatedAt: u.created, UpdatedAt: u.created, UserID: u.id, LastLogin: "2026-11-30T01:12:04",
		IsSuperadmin: u.superadmin,
	}
}

type groupOut struct {
	Name        string `json:"name"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
	UserGroupID string `json:"user_group_id"`
	IsBuiltin   bool   `json:"is_builtin"`
}

type projectOut struct {
	Name               string  `json:"name"`
	ProjectID          string  `json:"project_id"`
	Path               string  `json:"path"`
	AutoClose          bool    `json:"auto_close"`
	AutoOpen           bool    `json:"auto_open"`
	AutoStart          bool    `json:"auto_start"`
	SceneHeight        int     `json:"scene_height"`
	SceneWidth         int     `json:"scene_width"`
	Zoom               int     `json:"zoom"`
	ShowLayers         bool    `json:"show_layers"`
	SnapToGrid         bool    `json:"snap_to_grid"`
	ShowGrid           bool    `json:"show_grid"`
	GridSize           int     `json:"grid_size"`
	DrawingGridSize    int     `json:"drawing_grid_size"`
	ShowInterfaceLabel bool    `json:"show_interface_labels"`
	Supplier           any     `json:"supplier"`
	Variables          any     `json:"variables"`
	Status             string  `json:"status"`
	Filename           string  `json:"filename"`
	CreatedBy          *string `json:"created_by,omitempty"`
}

func (s *Server) projectJSON(p *project) projectOut {
	out := projectOut{
		Name: p.name, ProjectID: p.id, Path: "/home/gns3/GNS3/projects/" + p.id, AutoClose: true,
		SceneHeight: 1000, SceneWidth: 2000, Zoom: 100, GridSize: 75, DrawingGridSize: 25,
		Status: p.status, Filename: p.name + ".gns3",
	}
	if s.newerThan30() {
		out.CreatedBy = &p.owner
	}
	return out
}

type labelOut struct {
	Text     string  `json:"text"`
	Style    *string `json:"style"`
	X        *int    `json:"x"`
	Y        int     `json:"y"`
	Rotation int     `json:"rotation"`
}

// portFull is a port as GET node / create answer it; portShort as the node
// list does (without adapter_type and mac_address).
type portFull struct {
	Name          string            `json:"name"`
	ShortName     string            `json:"short_name"`
	AdapterNumber int               `json:"adapter_number"`
	AdapterType   *string           `json:"adapter_type"`
	PortNumber    int               `json:"port_number"`
	LinkType      string            `json:"link_type"`
	DataLinkTypes map[string]string `json:"data_link_types"`
	MACAddress    *string           `json:"mac_address"`
}

type portShort struct {
	Name          string            `json:"name"`
	ShortName     string            `json:"short_name"`
	AdapterNumber int               `json:"adapter_number"`
	PortNumber    int               `json:"port_number"`
	LinkType      string            `json:"link_type"`
	DataLinkTypes map[string]string `json:"data_link_types"`
}

type nodeOut struct {
	ComputeID        string         `json:"compute_id"`
	Name             string         `json:"name"`
	NodeType         string         `json:"node_type"`
	NodeID           string         `json:"node_id"`
	Console          *int           `json:"console"`
	ConsoleType      string         `json:"console_type"`
	ConsoleAutoStart bool           `json:"console_auto_start"`
	Aux              *int           `json:"aux"`
	AuxType          *string        `json:"aux_type"`
	Properties       map[string]any `json:"properties"`
	Label            labelOut       `json:"label"`
	Symbol           string         `json:"symbol"`
	X                int            `json:"x"`
	Y                int            `json:"y"`
	Z                int            `json:"z"`
	Locked           bool           `json:"locked"`
	PortNameFormat   string         `json:"port_name_format"`
	PortSegmentSize  int            `json:"port_segment_size"`
	FirstPortName    *string        `json:"first_port_name"`
	CustomAdapters   []any          `json:"custom_adapters"`
	Tags             *[]string      `json:"tags,omitempty"`
	TemplateID       *string        `json:"template_id"`
	// The fields below are absent when the project is closed.
	ProjectID     string  `json:"project_id,omitempty"`
	NodeDirectory string  `json:"node_directory,omitempty"`
	Status        string  `json:"status,omitempty"`
	CommandLine   *string `json:"command_line,omitempty"`
	Width         int     `json:"width"`
	Height        int     `json:"height"`
	Ports         any     `json:"ports,omitempty"`
	ConsoleHost   string  `json:"console_host,omitempty"`
}

type nodeShape int

const (
	shapeFull   nodeShape = iota // GET node, create, update
	shapeList                    // GET nodes
	shapeClosed                  // GET nodes on a closed project
)

// nodeJSON renders a node; reading its status counts as one status poll.
func (s *Server) nodeJSON(p *project, n *node, shape nodeShape) nodeOut {
	out := nodeOut{
		ComputeID: "local", Name: n.name, NodeType: n.nodeType, NodeID: n.id, ConsoleType: n.consoleType,
		Properties: map[string]any{"builtin": true, "usage": nil},
		Label:      labelOut{Text: n.name, Y: -40},
		Symbol:     n.symbol, X: n.x, Y: n.y, Z: 1, Locked: n.locked,
		PortNameFormat: "Ethernet{0}", CustomAdapters: []any{}, Width: 60, Height: 60,
	}
	for k, v := range n.properties {
		out.Properties[k] = v
	}
	if n.console != 0 {
		c := n.console
		out.Console = &c
	}
	if n.templateID != "" {
		out.TemplateID = &n.templateID
	}
	if n.tags != nil {
		tags := append([]string{}, n.tags...)
		out.Tags = &tags
	}
	if shape == shapeClosed {
		return out
	}
	out.ProjectID = p.id
	out.NodeDirectory = "/home/gns3/GNS3/projects/" + p.id + "/project-files/" + n.nodeType + "/" + n.id
	out.Status = n.status
	if n.pendingPolls > 0 {
		out.Status = "stopped"
		n.pendingPolls--
	}
	cmd := ""
	if out.Status == "started" && n.nodeType == "vpcs" {
		cmd = "/usr/local/bin/vpcs -p " + itoa(n.console+1) + " -m 0 -i 1 -F -R -t 127.0.0.1 startup.vpc"
	}
	out.CommandLine = &cmd
	out.ConsoleHost = n.consoleHost
	dlt := map[string]string{"Ethernet": "DLT_EN10MB"}
	if shape == shapeList {
		ports := make([]portShort, 0, len(n.ports))
		for _, pt := range n.ports {
			ports = append(ports, portShort{pt.Name, pt.ShortName, pt.Adapter, pt.Port, pt.LinkType, dlt})
		}
		out.Ports = ports
	} else {
		ports := make([]portFull, 0, len(n.ports))
		for _, pt := range n.ports {
			ports = append(ports, portFull{Name: pt.Name, ShortName: pt.ShortName, AdapterNumber: pt.Adapter,
				PortNumber: pt.Port, LinkType: pt.LinkType, DataLinkTypes: dlt})
		}
		out.Ports = ports
	}
	return out
}

const linkLabelStyle = "font-family: TypeWriter;font-size: 10.0;font-weight: bold;fill: #000000;fill-opacity: 1.0;"

type linkLabelFull struct {
	Text     string `json:"text"`
	Style    string `json:"style"`
	X        *int   `json:"x"`
	Y        *int   `json:"y"`
	Rotation *int   `json:"rotation"`
}

type linkLabelShort struct {
	Text  string `json:"text"`
	Style string `json:"style"`
}

type linkEndOut struct {
	NodeID        string `json:"node_id"`
	AdapterNumber int    `json:"adapter_number"`
	PortNumber    int    `json:"port_number"`
	Label         any    `json:"label"`
}

type linkOut struct {
	Nodes            []linkEndOut   `json:"nodes"`
	Suspend          bool           `json:"suspend"`
	LinkStyle        map[string]any `json:"link_style"`
	Filters          map[string]any `json:"filters"`
	LinkID           string         `json:"link_id"`
	ProjectID        string         `json:"project_id"`
	LinkType         string         `json:"link_type"`
	Capturing        bool           `json:"capturing"`
	CaptureFileName  *string        `json:"capture_file_name"`
	CaptureFilePath  *string        `json:"capture_file_path"`
	CaptureComputeID *string        `json:"capture_compute_id"`
	Wireshark        *bool          `json:"wireshark,omitempty"`
}

// linkJSON renders a link; the create answer (full) carries null label
// positions and link_style keys that later reads leave out, as in the samples.
func (s *Server) linkJSON(p *project, l *link, full bool) linkOut {
	out := linkOut{
		Nodes: make([]linkEndOut, 0, 2), LinkStyle: map[string]any{}, Filters: map[string]any{},
		LinkID: l.id, ProjectID: p.id, LinkType: "ethernet", Suspend: l.suspend,
	}
	for k, v := range l.filters {
		out.Filters[k] = append([]any(nil), v...)
	}
	for _, e := range l.ends {
		var label any = linkLabelShort{Text: e.Label, Style: linkLabelStyle}
		if full {
			label = linkLabelFull{Text: e.Label, Style: linkLabelStyle}
		}
		out.Nodes = append(out.Nodes, linkEndOut{NodeID: e.NodeID, AdapterNumber: e.Adapter, PortNumber: e.Port, Label: label})
	}
	if full {
		out.LinkStyle = map[string]any{"color": nil, "width": nil, "type": nil}
	}
	if s.newerThan30() {
		f := false
		out.Wireshark = &f
	}
	s.captureFields(p, l, &out)
	return out
}

// pyRepr renders a string the way Python's repr() does, for 422 messages.
func pyRepr(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`)
	return "'" + r.Replace(v) + "'"
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
