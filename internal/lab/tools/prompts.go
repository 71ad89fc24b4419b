package tools

import (
	"embed"
	"strings"
)

//go:embed prompts/*.md
var promptFiles embed.FS

// SystemPrompt returns the system prompt of a mode (embedded from
// tools/prompts). The caller appends the project context; see
// BuildSystemPrompt.
func SystemPrompt(mode Mode) string {
	m, err := ParseMode(string(mode))
	if err != nil {
		m = TeachingAssistant
	}
	b, err := promptFiles.ReadFile("prompts/" + string(m) + ".md")
	if err != nil {
		panic("tools: missing embedded prompt for " + string(m))
	}
	return string(b)
}

// BuildSystemPrompt joins a mode's prompt and the project context produced
// by ProjectContext (or a note when it could not be read).
func BuildSystemPrompt(mode Mode, projectContext string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(SystemPrompt(mode)))
	b.WriteString("\n\n# Current project\n\n")
	if strings.TrimSpace(projectContext) == "" {
		b.WriteString("(The topology could not be read just now; call get_gns3_topology.)\n")
	} else {
		b.WriteString(strings.TrimSpace(projectContext))
		b.WriteString("\n")
	}
	return b.String()
}
