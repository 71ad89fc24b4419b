package mcp

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"strings"
	"text/template"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Guided prompts: whole tasks an agent starts cold on (build a lab, configure routing,
// troubleshoot reachability, analyse a capture, coach an exercise), each a user message that
// names the tools in the order that works and the approval step. The texts are in prompts/*.md,
// Go templates of the prompt's arguments.

//go:embed prompts/*.md
var promptFiles embed.FS

type promptArg struct {
	name, description string
	required          bool
}

type guidedPrompt struct {
	name, title, description string
	args                     []promptArg
}

var projectArgument = promptArg{name: "project_id", description: "The GNS3 project (its UUID); leave it out to be asked, list_gns3_projects lists yours."}

var guidedPrompts = []guidedPrompt{
	{name: "build_lab", title: "Build a lab from a description",
		description: "Create the nodes and links a description asks for, start them, address them and check the result.",
		args:        []promptArg{{name: "description", description: "The lab in your words, e.g. \"three routers in a triangle, a PC behind each\".", required: true}, projectArgument}},
	{name: "configure_routing", title: "Configure addressing and a routing protocol",
		description: "Plan and apply interface addressing and a routing protocol (OSPF, BGP, RIP, static) on the lab's routers, then verify it.",
		args: []promptArg{{name: "protocol", description: "The routing protocol: ospf, bgp, rip, eigrp or static.", required: true}, projectArgument,
			{name: "addressing", description: "Optional: the addressing to use, e.g. \"10.0.12.0/30 between R1 and R2\"; proposed when left out."}}},
	{name: "troubleshoot_reachability", title: "Troubleshoot reachability",
		description: "Find out, hop by hop with read-only checks, why one device cannot reach another, and propose the smallest fix.",
		args: []promptArg{{name: "source", description: "The device that cannot reach, e.g. PC1.", required: true},
			{name: "destination", description: "What it cannot reach: a device or an address.", required: true}, projectArgument}},
	{name: "analyse_capture", title: "Analyse a packet capture",
		description: "Capture on a link while traffic flows and explain what the packets show.",
		args: []promptArg{projectArgument, {name: "link", description: "Optional: the link, e.g. \"R1 Gi0/0 - R2 Gi0/0\"; found from the question when left out."},
			{name: "question", description: "Optional: what you want to know, e.g. \"why OSPF does not come up\"."}}},
	{name: "run_exercise", title: "Work through a troubleshooting exercise",
		description: "Coach the student through an exercise started on the copilot's chat page, with questions and read-only checks, never revealing the fault.",
		args:        []promptArg{projectArgument}},
}

var promptTemplates = template.Must(template.New("prompts").Option("missingkey=zero").ParseFS(promptFiles, "prompts/*.md"))

func (s *session) addPrompts() {
	for _, p := range guidedPrompts {
		args := make([]*sdk.PromptArgument, len(p.args))
		for i, a := range p.args {
			args[i] = &sdk.PromptArgument{Name: a.name, Description: a.description, Required: a.required}
		}
		s.server.AddPrompt(&sdk.Prompt{Name: p.name, Title: p.title, Description: p.description, Arguments: args}, p.get)
	}
}

func (p guidedPrompt) get(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	vars := map[string]string{}
	for _, a := range p.args {
		v := strings.TrimSpace(req.Params.Arguments[a.name])
		if v == "" && a.required {
			return nil, fmt.Errorf("prompt %s needs the argument %s: %s", p.name, a.name, a.description)
		}
		if v != "" {
			vars[a.name] = v
		}
	}
	if vars["project_id"] == "" {
		vars["project_id"] = "(ask me which project; list_gns3_projects lists them)"
	}
	var b bytes.Buffer
	if err := promptTemplates.ExecuteTemplate(&b, p.name+".md", vars); err != nil {
		return nil, fmt.Errorf("rendering prompt %s: %w", p.name, err)
	}
	return &sdk.GetPromptResult{Description: p.description,
		Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: strings.TrimSpace(b.String())}}}}, nil
}
