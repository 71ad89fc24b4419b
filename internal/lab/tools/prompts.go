package tools

import (
	"embed"
	"strings"
	"sync"
)

//go:embed prompts/*.md
var promptFiles embed.FS

// modePrompts are the embedded prompts by mode, read once: every model call of every turn
// builds its system prompt from one, and reading it from the embedded files copied it twice.
var modePrompts = sync.OnceValue(func() map[Mode]string {
	out := map[Mode]string{}
	for _, m := range Modes {
		b, err := promptFiles.ReadFile("prompts/" + string(m) + ".md")
		if err != nil {
			panic("tools: missing embedded prompt for " + string(m))
		}
		out[m] = string(b)
	}
	return out
})

// SystemPrompt returns the system prompt of a mode (embedded from tools/prompts). The caller
// appends the project context; see BuildSystemPrompt.
func SystemPrompt(mode Mode) string {
	m, err := ParseMode(string(mode))
	if err != nil {
		m = TeachingAssistant
	}
	return modePrompts()[m]
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
