package gns3

// The types below mirror the GNS3 v3 controller schemas for the fields the
// copilot reads. Real answers omit some fields or send them as null
// depending on the version and on whether the project is opened, so every
// field is optional: JSON null leaves a Go zero value, and pointers are used
// only where "absent" must stay distinguishable from 0.

// Token is the answer of POST /v3/access/users/authenticate.
type Token struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
}

// String keeps the access token out of logs and error text.
func (t Token) String() string { return "gns3.Token{" + t.TokenType + " [redacted]}" }

// GoString keeps the access token out of %#v.
func (t Token) GoString() string { return t.String() }

// User is GET /v3/access/users/me.
type User struct {
	UserID       string `json:"user_id"`
	Username     string `json:"username"`
	Email        string `json:"email,omitempty"`
	FullName     string `json:"full_name,omitempty"`
	IsActive     bool   `json:"is_active"`
	IsSuperadmin bool   `json:"is_superadmin"`
	LastLogin    string `json:"last_login,omitempty"`
	CreatedAt    string `json:"created_at,omitempty"`
	UpdatedAt    string `json:"updated_at,omitempty"`
}

// Group is one entry of GET /v3/access/users/{id}/groups.
type Group struct {
	UserGroupID string `json:"user_group_id"`
	Name        string `json:"name"`
	IsBuiltin   bool   `json:"is_builtin"`
	CreatedAt   string `json:"created_at,omitempty"`
	UpdatedAt   string `json:"updated_at,omitempty"`
}

// Project statuses.
const (
	ProjectOpened = "opened"
	ProjectClosed = "closed"
)

// Project is a GNS3 project.
type Project struct {
	ProjectID   string `json:"project_id"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	Path        string `json:"path,omitempty"`
	Filename    string `json:"filename,omitempty"`
	AutoClose   bool   `json:"auto_close"`
	AutoOpen    bool   `json:"auto_open"`
	AutoStart   bool   `json:"auto_start"`
	SceneWidth  int    `json:"scene_width,omitempty"`
	SceneHeight int    `json:"scene_height,omitempty"`
	CreatedBy   string `json:"created_by,omitempty"` // 3.1+
}

// ProjectStats is GET /v3/projects/{id}/stats.
type ProjectStats struct {
	Nodes     int `json:"nodes"`
	Links     int `json:"links"`
	Drawings  int `json:"drawings"`
	Snapshots int `json:"snapshots"`
}

// Template is one entry of GET /v3/templates. Type-specific settings are not
// decoded.
type Template struct {
	TemplateID        string   `json:"template_id"`
	Name              string   `json:"name"`
	TemplateType      string   `json:"template_type"`
	Category          string   `json:"category,omitempty"`
	Symbol            string   `json:"symbol,omitempty"`
	Builtin           bool     `json:"builtin"`
	ComputeID         string   `json:"compute_id,omitempty"`
	DefaultNameFormat string   `json:"default_name_format,omitempty"`
	ConsoleType       string   `json:"console_type,omitempty"`
	Tags              []string `json:"tags,omitempty"`
}

// Node statuses.
const (
	NodeStarted   = "started"
	NodeStopped   = "stopped"
	NodeSuspended = "suspended"
)

// Node is a GNS3 node. On a closed project GNS3 lists nodes without
// status, ports, console_host or project_id.
type Node struct {
	NodeID           string         `json:"node_id"`
	Name             string         `json:"name"`
	NodeType         string         `json:"node_type"`
	Status           string         `json:"status,omitempty"`
	ProjectID        string         `json:"project_id,omitempty"`
	ComputeID        string         `json:"compute_id,omitempty"`
	TemplateID       string         `json:"template_id,omitempty"`
	Console          *int           `json:"console,omitempty"`
	ConsoleHost      string         `json:"console_host,omitempty"`
	ConsoleType      string         `json:"console_type,omitempty"`
	ConsoleAutoStart bool           `json:"console_auto_start"`
	Ports            []Port         `json:"ports,omitempty"`
	X                int            `json:"x"`
	Y                int            `json:"y"`
	Z                int            `json:"z"`
	Locked           bool           `json:"locked"`
	Symbol           string         `json:"symbol,omitempty"`
	Label            *Label         `json:"label,omitempty"`
	Tags             []string       `json:"tags,omitempty"` // 3.1+
	Properties       map[string]any `json:"properties,omitempty"`
	CommandLine      string         `json:"command_line,omitempty"`
	NodeDirectory    string         `json:"node_directory,omitempty"`
	PortNameFormat   string         `json:"port_name_format,omitempty"`
	FirstPortName    string         `json:"first_port_name,omitempty"`
	Width            int            `json:"width,omitempty"`
	Height           int            `json:"height,omitempty"`
}

// Port is one network port of a node.
type Port struct {
	Name          string            `json:"name"`
	ShortName     string            `json:"short_name"`
	AdapterNumber int               `json:"adapter_number"`
	PortNumber    int               `json:"port_number"`
	AdapterType   string            `json:"adapter_type,omitempty"`
	LinkType      string            `json:"link_type,omitempty"`
	DataLinkTypes map[string]string `json:"data_link_types,omitempty"`
	MACAddress    string            `json:"mac_address,omitempty"`
}

// Label is the text drawn next to a node or a link end.
type Label struct {
	Text     string `json:"text"`
	Style    string `json:"style,omitempty"`
	X        *int   `json:"x,omitempty"`
	Y        *int   `json:"y,omitempty"`
	Rotation *int   `json:"rotation,omitempty"`
}

// Link connects exactly two node ports.
type Link struct {
	LinkID          string         `json:"link_id"`
	ProjectID       string         `json:"project_id,omitempty"`
	LinkType        string         `json:"link_type,omitempty"`
	Nodes           []LinkEnd      `json:"nodes"`
	Suspend         bool           `json:"suspend"`
	Capturing       bool           `json:"capturing"`
	Filters         LinkFilters    `json:"filters,omitempty"`
	LinkStyle       map[string]any `json:"link_style,omitempty"`
	CaptureFileName string         `json:"capture_file_name,omitempty"`
}

// LinkEnd is one side of a link.
type LinkEnd struct {
	NodeID        string `json:"node_id"`
	AdapterNumber int    `json:"adapter_number"`
	PortNumber    int    `json:"port_number"`
	Label         *Label `json:"label,omitempty"`
}

// TemplateUsage is the body of POST /v3/projects/{p}/templates/{t}.
type TemplateUsage struct {
	X         int    `json:"x"`
	Y         int    `json:"y"`
	Name      string `json:"name,omitempty"`
	ComputeID string `json:"compute_id,omitempty"`
}

// NodeUpdate is the body of PUT /v3/projects/{p}/nodes/{n}; nil fields are
// left unchanged.
type NodeUpdate struct {
	Name *string `json:"name,omitempty"`
	X    *int    `json:"x,omitempty"`
	Y    *int    `json:"y,omitempty"`
}

// LinkCreate is the body of POST /v3/projects/{p}/links.
type LinkCreate struct {
	Nodes []LinkEnd `json:"nodes"`
}

// Version is GET /v3/version.
type Version struct {
	Version        string `json:"version"`
	ControllerHost string `json:"controller_host,omitempty"`
	Local          bool   `json:"local"`
}

// ConsolePort returns the node's console TCP port, or 0 when it has none.
func (n *Node) ConsolePort() int {
	if n.Console == nil {
		return 0
	}
	return *n.Console
}

// FindPort returns the port whose name or short name equals name (case
// insensitive), e.g. "Ethernet0", "e0", "GigabitEthernet0/0", "Gi0/0".
func (n *Node) FindPort(name string) (Port, bool) {
	for _, p := range n.Ports {
		if equalFold(p.Name, name) {
			return p, true
		}
	}
	for _, p := range n.Ports {
		if p.ShortName != "" && equalFold(p.ShortName, name) {
			return p, true
		}
	}
	return Port{}, false
}
