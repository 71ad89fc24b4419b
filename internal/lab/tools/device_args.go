package tools

import (
	"encoding/json"
	"errors"
)

// decodeDeviceArgs reads a device tool's arguments in either form: device_configs (commands
// per device), or the form of the example in GNS3's tool response format, {"device_names":
// [...], "commands": [...]}, which runs the same commands on every named device and is rewritten into device_configs here.
func decodeDeviceArgs(raw json.RawMessage, a *deviceArgs) error {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return decodeArgs(raw, a)
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
		DeviceNames []string        `json:"device_names"`
		Commands    []string        `json:"commands"`
		WaitFor     json.RawMessage `json:"wait_for,omitempty"`
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
	type entry struct {
		DeviceName string   `json:"device_name"`
		Commands   []string `json:"commands"`
	}
	configs := make([]entry, len(same.DeviceNames))
	for i, n := range same.DeviceNames {
		configs[i] = entry{DeviceName: n, Commands: same.Commands}
	}
	form := map[string]any{"project_id": same.ProjectID, "device_configs": configs}
	if len(same.WaitFor) > 0 {
		form["wait_for"] = same.WaitFor
	}
	rewritten, err := json.Marshal(form)
	if err != nil {
		return err
	}
	return decodeArgs(rewritten, a)
}
