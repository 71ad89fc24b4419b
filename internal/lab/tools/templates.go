package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// utilityTypes are GNS3's built-in helper templates; they are not offered
// unless asked for, as in the reference implementation.
var utilityTypes = map[string]bool{
	"atm_switch": true, "cloud": true, "ethernet_hub": true, "ethernet_switch": true,
	"frame_relay_switch": true, "nat": true,
}

type templatesTool struct{ spec }

func newTemplatesTool() Tool {
	return &templatesTool{spec{
		name: "get_gns3_templates",
		description: "List the device templates nodes can be created from (template_id, name, type, category). " +
			"GNS3's built-in utility templates (Ethernet switch/hub, Cloud, NAT, Frame Relay and ATM switch) are left out " +
			"unless include_utility is true.",
		schema: `{"type":"object","properties":{` +
			`"include_utility":{"type":"boolean","description":"Also list the built-in Ethernet switch/hub, Cloud, NAT, Frame Relay and ATM switch templates.","default":false}` +
			`},"additionalProperties":false}`,
		modes:      bothModes,
		idempotent: true,
	}}
}

func (tt *templatesTool) Run(ctx context.Context, env Env, raw json.RawMessage) Result {
	var args struct {
		projectArg
		IncludeUtility bool `json:"include_utility"`
	}
	if err := decodeArgs(raw, &args); err != nil {
		return failWith(err)
	}
	if err := args.check(env); err != nil {
		return failWith(err)
	}
	ts, err := env.GNS3.ListTemplates(ctx)
	if err != nil {
		return failWith(fmt.Errorf("could not list templates: %w", explain(err)))
	}
	sort.SliceStable(ts, func(i, j int) bool { return strings.ToLower(ts[i].Name) < strings.ToLower(ts[j].Name) })
	items := make([]Item, 0, len(ts))
	hidden := 0
	for _, t := range ts {
		if utilityTypes[t.TemplateType] && !args.IncludeUtility {
			hidden++
			continue
		}
		items = append(items, ok(t.TemplateID, t.Name, templateText(t)))
	}
	r := Collect(items)
	r.Metadata["hidden_utility_templates"] = hidden
	return r
}

func templateText(t gns3.Template) string {
	var b strings.Builder
	fmt.Fprintf(&b, "type %s", t.TemplateType)
	if t.Category != "" {
		fmt.Fprintf(&b, ", category %s", t.Category)
	}
	if t.DefaultNameFormat != "" {
		fmt.Fprintf(&b, ", nodes named %s", strings.ReplaceAll(t.DefaultNameFormat, "{0}", "N"))
	}
	if t.Builtin {
		b.WriteString(", built-in")
	}
	return b.String()
}
