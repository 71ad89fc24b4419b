package tools

import (
	"embed"
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

// SystemPrompt returns the system prompt of a mode (embedded from tools/prompts). It holds nothing
// of the lab: the project is shown in the conversation (see SnapshotContext), so the prompt stays
// the same for every call of the mode.
func SystemPrompt(mode Mode) string {
	m, err := ParseMode(string(mode))
	if err != nil {
		m = TeachingAssistant
	}
	return modePrompts()[m]
}
