package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// decodeDeviceArgs reads a device tool's arguments in any of its forms: device_configs
// (commands per device); the form of the example in GNS3's tool response format,
// {"device_names": [...], "commands": [...]}, which runs the same commands on every named
// device; or a template rendered per device, {"template": "...", "devices": [{"device_name",
// "vars"}]}. The last two are rewritten into device_configs here, so the plan, the approval and
// the audit show the lines exactly as they will be sent.
func decodeDeviceArgs(raw json.RawMessage, a *deviceArgs) error {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return decodeArgs(raw, a)
	}
	_, tmpl := probe["template"]
	_, devs := probe["devices"]
	if tmpl || devs {
		if _, both := probe["device_configs"]; both {
			return errors.New("give either device_configs, or template with devices, not both")
		}
		return decodeTemplateArgs(raw, a)
	}
	_, names := probe["device_names"]
	_, cmds := probe["commands"]
	if !names && !cmds {
		return decodeArgs(raw, a)
	}
	if _, both := probe["device_configs"]; both {
		return errors.New("give either device_configs, or device_names with commands, not both")
	}
	var same struct {
		projectArg
		DeviceNames []string     `json:"device_names"`
		Commands    []string     `json:"commands"`
		WaitFor     []waitForArg `json:"wait_for"`
	}
	if err := decodeArgs(raw, &same); err != nil {
		return err
	}
	if len(same.DeviceNames) == 0 {
		return errors.New("device_names must list at least one device")
	}
	if len(same.Commands) == 0 {
		return errors.New("commands must list at least one command for the devices in device_names")
	}
	configs := make([]deviceConfig, len(same.DeviceNames))
	for i, n := range same.DeviceNames {
		configs[i] = deviceConfig{DeviceName: n, Commands: same.Commands}
	}
	a.ProjectID, a.DeviceConfigs, a.WaitFor = same.ProjectID, configs, same.WaitFor
	return nil
}

// maxRenderedBytes bounds one device's rendering: far above 100 lines of 1000 characters, so a
// template that loops without end stops here instead of filling memory.
const maxRenderedBytes = 256 << 10

// templateSchema is the template form's part of a device tool's argument schema.
const templateSchema = `{"template":{"type":"string","description":"Instead of device_configs: one Go text/template rendered per device ` +
	`with that device's vars (e.g. \"interface {{.iface}}\\n ip address {{.ip}} 255.255.255.0\"); every line it renders is a command. ` +
	`{{.device_name}} is the device's name unless vars set it. A var the template uses that a device lacks refuses the whole call."},` +
	`"devices":{"type":"array","minItems":1,"maxItems":100,"description":"With template: the devices and their values.","items":{"type":"object","properties":{` +
	`"device_name":{"type":"string","description":"As in device_configs."},` +
	`"vars":{"type":"object","description":"The values the template uses for this device, e.g. {\"ip\": \"10.0.0.1\"}."}},` +
	`"required":["device_name"],"additionalProperties":false}}}`

// Parameters is the device tool's schema with the template form beside device_configs: either
// may be given, so neither is required by the schema (the tool says which is missing).
func (t *deviceTool) Parameters() json.RawMessage { return t.params() }

func (t *deviceTool) buildParameters() json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal([]byte(t.schema), &m); err != nil {
		return json.RawMessage(t.schema)
	}
	var extra map[string]any
	if err := json.Unmarshal([]byte(templateSchema), &extra); err != nil {
		panic("tools: the template form's schema does not parse: " + err.Error())
	}
	props, _ := m["properties"].(map[string]any)
	for k, v := range extra {
		props[k] = v
	}
	delete(m, "required")
	b, _ := json.Marshal(m)
	return b
}

// missingKey reads the name of the var text/template found missing under missingkey=error.
var missingKey = regexp.MustCompile(`map has no entry for key "([^"]*)"`)

// decodeTemplateArgs renders the template form into device_configs: every device, or none. A
// var missing for any device refuses the call, naming the device and the var.
func decodeTemplateArgs(raw json.RawMessage, a *deviceArgs) error {
	var in struct {
		projectArg
		Template string       `json:"template"`
		WaitFor  []waitForArg `json:"wait_for"`
		Devices  []struct {
			DeviceName string         `json:"device_name"`
			Vars       map[string]any `json:"vars"`
		} `json:"devices"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return err
	}
	if strings.TrimSpace(in.Template) == "" {
		return errors.New("template must be a non-empty Go text/template, rendered once per entry of devices")
	}
	if len(in.Devices) == 0 {
		return errors.New("devices must list at least one {device_name, vars} for the template")
	}
	if len(in.Devices) > maxDevicesPerCall {
		return fmt.Errorf("at most %d devices per call (got %d)", maxDevicesPerCall, len(in.Devices))
	}
	tpl, err := template.New("template").Option("missingkey=error").Parse(in.Template)
	if err != nil {
		return fmt.Errorf("the template does not parse, so nothing was applied: %v", strings.TrimPrefix(err.Error(), "template: "))
	}
	a.ProjectID, a.WaitFor = in.ProjectID, in.WaitFor
	a.DeviceConfigs = make([]deviceConfig, 0, len(in.Devices))
	for i, d := range in.Devices {
		name := d.DeviceName
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("devices[%d]: device_name is empty", i)
		}
		vars := make(map[string]any, len(d.Vars)+1)
		vars["device_name"] = name
		for k, v := range d.Vars {
			vars[k] = v
		}
		out := &boundedBuffer{max: maxRenderedBytes}
		if err := tpl.Execute(out, vars); err != nil {
			if m := missingKey.FindStringSubmatch(err.Error()); m != nil {
				return fmt.Errorf("device %s: the template uses {{.%s}}, which its vars do not set; nothing was applied to any device", name, m[1])
			}
			return fmt.Errorf("device %s: rendering the template failed, so nothing was applied to any device: %v", name, strings.TrimPrefix(err.Error(), "template: "))
		}
		a.DeviceConfigs = append(a.DeviceConfigs, deviceConfig{DeviceName: name, Commands: strings.Split(out.String(), "\n")})
	}
	return nil
}

// boundedBuffer fails a write past max bytes.
type boundedBuffer struct {
	bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, fmt.Errorf("the rendering is longer than %d KiB", b.max>>10)
	}
	return b.Buffer.Write(p)
}
