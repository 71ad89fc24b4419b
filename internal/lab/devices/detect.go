package devices

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// Target is what the device tools know about a GNS3 node's console: the device plan's target,
// with the driver's methods.
type Target domain.DeviceTarget

func (t Target) label() string {
	switch {
	case t.Name != "":
		return t.Name
	case t.NodeID != "":
		return t.NodeID
	}
	return fmt.Sprintf("console port %d", t.ConsolePort)
}

// LockKey names the device for the per-device lock: the node ID when known,
// otherwise the console endpoint, which is what really allows one writer.
func (t Target) LockKey() string {
	if t.NodeID != "" {
		return "node:" + t.NodeID
	}
	return "console:" + net.JoinHostPort(t.ConsoleHost, strconv.Itoa(t.ConsolePort))
}

var (
	// ErrPlatformUnknown means nothing about a node told which CLI it runs.
	ErrPlatformUnknown = errors.New("platform unknown")
	// ErrUnsupportedConsole means the node has no telnet or SSH console to drive.
	ErrUnsupportedConsole = errors.New("unsupported console")
)

// DetectError explains which clues were tried when a platform could not be
// told, so the user knows which tag to add.
type DetectError struct {
	Device string
	Tried  []string
	// Cause is the underlying failure, if any (a console that never showed
	// a recognisable prompt also matches ErrNoPrompt).
	Cause error
}

func (e *DetectError) Error() string {
	return fmt.Sprintf("cannot tell the platform of device %q (tried %s); add a node tag \"device_type:<platform>\" with one of: %s",
		e.Device, strings.Join(e.Tried, "; "), strings.Join(ProfileNames(), ", "))
}

// Unwrap lets errors.Is(err, ErrPlatformUnknown) work.
func (e *DetectError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrPlatformUnknown, e.Cause}
	}
	return []error{ErrPlatformUnknown}
}

// ConsoleAddr returns host:port of the node's console (see Endpoint).
func (t Target) ConsoleAddr(gns3Host string) (string, error) {
	ep, err := t.Endpoint(gns3Host)
	return ep.Addr, err
}

// Endpoint returns where the node's console listens and how it is spoken to: telnet or SSH, as
// its console_type says. GNS3 reports console_host 0.0.0.0 or :: when the console listens on
// every interface; then the GNS3 server's own host is the address to use.
func (t Target) Endpoint(gns3Host string) (Endpoint, error) {
	ct := strings.ToLower(strings.TrimSpace(t.ConsoleType))
	switch ct {
	case "", ConsoleTelnet:
		ct = ConsoleTelnet
	case ConsoleSSH:
	default:
		return Endpoint{}, fmt.Errorf("device %q: its console type is %q, %s; set the node's console type to telnet or ssh (node settings in GNS3, node stopped) to run commands on it: %w",
			t.label(), t.ConsoleType, consoleTypeNote(ct), ErrUnsupportedConsole)
	}
	if t.ConsolePort <= 0 || t.ConsolePort > 65535 {
		return Endpoint{}, fmt.Errorf("device %q has no console port (is it started, and is it a device with a CLI?): %w",
			t.label(), ErrUnsupportedConsole)
	}
	host := strings.Trim(strings.TrimSpace(t.ConsoleHost), "[]")
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = strings.Trim(strings.TrimSpace(gns3Host), "[]")
		if host == "" {
			return Endpoint{}, fmt.Errorf("device %q: console host is %q and no GNS3 host was given to replace it", t.label(), t.ConsoleHost)
		}
	}
	return Endpoint{Addr: net.JoinHostPort(host, strconv.Itoa(t.ConsolePort)), Type: ct}, nil
}

// consoleTypeNote says what a console type that carries no command line is.
func consoleTypeNote(ct string) string {
	switch ct {
	case "vnc", "spice", "spice+agent":
		return "a remote screen, not a command line"
	case "http", "https":
		return "a web page, not a command line"
	case "none":
		return "so the node has no console"
	}
	return "which the copilot cannot drive"
}

// Node types GNS3 creates without a CLI console.
var consoleless = map[string]bool{
	"cloud": true, "nat": true, "ethernet_hub": true, "ethernet_switch": true,
	"frame_relay_switch": true, "atm_switch": true, "traceng": true,
}

var nodeTypePlatforms = map[string]string{
	"vpcs":     "vpcs",
	"docker":   "linux",
	"dynamips": "cisco_ios",
	"iou":      "cisco_ios",
}

// NodeTypeDecides reports whether a node's type alone names its platform, whatever its
// template or image: a VPCS node is VPCS. (A Docker, Dynamips or IOU node may be FRR, IOS-XE or
// another image, so those types only guess.) Callers skip reading template names for such nodes.
func NodeTypeDecides(nodeType string) bool {
	return strings.EqualFold(strings.TrimSpace(nodeType), "vpcs")
}

// imagePatterns map template and image names to platforms. Order matters:
// a Junos image name may also contain "linux", an Arista one "eos", and the
// free routers' names ("frr", "vyos", "openwrt") must win over the shells.
var imagePatterns = []struct {
	re       *regexp.Regexp
	platform string
}{
	{regexp.MustCompile(`juniper|junos|\bvmx|vsrx|vqfx|vjunos|\bolive`), "juniper_junos"},
	{regexp.MustCompile(`huawei|\bvrp|\bne40|\bne5000|\bce(6800|6850|12800)|cloudengine|\bar\d{3,5}|\busg\d`), "huawei_vrp"},
	{regexp.MustCompile(`ruijie|\brgos|\brg-`), "ruijie"},
	{regexp.MustCompile(`arista|\bveos|\bceos|\beos\b`), "arista_eos"},
	{regexp.MustCompile(`\bvpcs`), "vpcs"},
	{regexp.MustCompile(`\bfrr|frrouting`), "frr"},
	{regexp.MustCompile(`\bvyos|vyatta`), "vyos"},
	{regexp.MustCompile(`mikrotik|routeros|\bchr\b|\bchr[-_.\d]`), "mikrotik_routeros"},
	{regexp.MustCompile(`openwrt|\blede\b`), "openwrt"},
	{regexp.MustCompile(`cisco|\bios|vios|csr1000v|cat8000|\bc8000|\bc7200|\bc3[67]\d\d|\bc2691|\bc1700|\bc2600|i86bi|\biou|\bl[23]-adv|nxos|\bn9k|titanium`), "cisco_ios"},
	{regexp.MustCompile(`alpine|ubuntu|debian|centos|fedora|rocky|busybox|linux|multitool|ipterm|toolbox`), "linux"},
}

func matchName(name string) *Profile {
	name = strings.ToLower(name)
	for _, ip := range imagePatterns {
		if ip.re.MatchString(name) {
			return profiles[ip.platform]
		}
	}
	return nil
}

// DetectPlatform finds a node's platform without connecting, from what
// GNS3 says about the node, in this order:
//
//  1. a "device_type:" or "platform:" tag (the user's word is final);
//  2. the template name (resolved from the node's template_id);
//  3. the image file names (hda_disk_image, image, path, …);
//  4. the node type (vpcs, docker, dynamips, iou).
//
// It returns a *DetectError (matching ErrPlatformUnknown) when none of them
// tells; Connect then asks the console's prompt and banner, which also
// correct a guess from 2–4 that the console contradicts. Nodes that have no
// CLI console fail with ErrUnsupportedConsole.
func DetectPlatform(t Target) (*Profile, error) {
	p, _, err := detectPlatform(t)
	return p, err
}

// detectPlatform is DetectPlatform, also telling whether a tag named the
// platform (final) or it was guessed from the node.
func detectPlatform(t Target) (p *Profile, tagged bool, err error) {
	var tried []string
	for _, key := range []string{"device_type", "platform"} {
		for _, tag := range t.Tags {
			k, v, ok := strings.Cut(tag, ":")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), key) {
				continue
			}
			p, err := ProfileByName(v)
			if err != nil {
				return nil, false, fmt.Errorf("device %q: tag %q: %w", t.label(), tag, err)
			}
			return p, true, nil
		}
	}
	tried = append(tried, fmt.Sprintf("tags %q", t.Tags))

	nt := strings.ToLower(strings.TrimSpace(t.NodeType))
	if consoleless[nt] {
		return nil, false, fmt.Errorf("device %q: node type %q has no command-line console: %w", t.label(), t.NodeType, ErrUnsupportedConsole)
	}
	if p := matchName(t.TemplateName); p != nil {
		return p, false, nil
	}
	tried = append(tried, fmt.Sprintf("template %q", t.TemplateName))
	if p := matchName(t.Image); p != nil {
		return p, false, nil
	}
	tried = append(tried, fmt.Sprintf("image %q", t.Image))
	if name, ok := nodeTypePlatforms[nt]; ok {
		return profiles[name], false, nil
	}
	tried = append(tried, fmt.Sprintf("node type %q", t.NodeType))
	return nil, false, &DetectError{Device: t.label(), Tried: tried}
}

// Connect opens a session to a node's console, telnet or SSH: it checks the console type,
// resolves the address (gns3Host replaces a wildcard console_host), detects
// the platform from the node and, failing that, from the console's prompt
// and banner.
func Connect(ctx context.Context, t Target, gns3Host string, opts Options) (*Session, error) {
	ep, err := t.Endpoint(gns3Host)
	if err != nil {
		return nil, err
	}
	p, tagged, err := detectPlatform(t)
	var derr *DetectError
	if err != nil && !errors.As(err, &derr) {
		return nil, err
	}
	s, err := open(ctx, ep, p, !tagged, opts)
	if err != nil {
		var perr *DetectError
		if derr != nil && errors.As(err, &perr) {
			return nil, &DetectError{Device: t.label(), Tried: append(derr.Tried, perr.Tried...), Cause: perr.Cause}
		}
		return nil, fmt.Errorf("device %q: %w", t.label(), err)
	}
	return s, nil
}
