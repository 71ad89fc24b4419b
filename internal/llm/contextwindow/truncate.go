package contextwindow

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// TruncateToolOutput shortens a tool's output with the Estimator; see Counter.TruncateToolOutput.
func TruncateToolOutput(s string, maxTokens int) string {
	return Estimator.TruncateToolOutput(s, maxTokens)
}

// cutNote tells the model that it sees part of the output and what to do about it. The full
// output is not lost: it stays in the transcript and went to the user in the tool_end event.
const cutNote = "\n\n[… %d of %d tokens of this tool output were cut here to fit the model's context window. " +
	"The full output is kept in the chat transcript and was shown to the user. To read the missing part, " +
	"run a narrower command (one section, one interface) or ask about fewer devices at a time …]\n\n"

const omittedNote = "[tool output of %d tokens omitted: too large for the model's context window]"

// TruncateToolOutput returns s unchanged when it fits maxTokens, otherwise its beginning and its
// end (where command outputs put their summaries and errors) around a note saying how much was
// cut. The result never exceeds maxTokens; when even the note does not fit, a shorter note, or
// nothing, is returned. Cuts fall on line breaks where one is near, and never split a character.
func (c *Counter) TruncateToolOutput(s string, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	total := c.Text(s)
	if total <= maxTokens {
		return s
	}
	_, pieces, err := c.codec().Encode(s)
	if err != nil || len(pieces) == 0 {
		return c.fallbackNote(total, maxTokens)
	}
	reserve := c.Text(fmt.Sprintf(cutNote, total, total))
	for attempt := 0; attempt < 8; attempt++ {
		avail := maxTokens - reserve
		if avail <= 0 {
			break
		}
		raw := int(math.Floor(float64(avail) / c.margin)) // in the vocabulary's own tokens
		if raw > len(pieces) {
			raw = len(pieces)
		}
		headN := raw * 2 / 3
		head := headCut(strings.Join(pieces[:headN], ""))
		tail := tailCut(strings.Join(pieces[len(pieces)-(raw-headN):], ""))
		omitted := total - c.Text(head) - c.Text(tail)
		out := head + fmt.Sprintf(cutNote, max(omitted, 1), total) + tail
		n := c.Text(out)
		if n <= maxTokens {
			return out
		}
		// Pieces re-merge differently at the seams; take the overshoot off and try again.
		reserve += n - maxTokens
	}
	return c.fallbackNote(total, maxTokens)
}

func (c *Counter) fallbackNote(total, maxTokens int) string {
	if note := fmt.Sprintf(omittedNote, total); c.Text(note) <= maxTokens {
		return note
	}
	return ""
}

// headCut ends the head at a character boundary and, when one is in its last quarter, at a line
// break, so the model does not read half a line as if it were whole.
func headCut(h string) string {
	for i := 1; i <= utf8.UTFMax && i <= len(h); i++ {
		if utf8.RuneStart(h[len(h)-i]) {
			if !utf8.FullRuneInString(h[len(h)-i:]) {
				h = h[:len(h)-i]
			}
			break
		}
	}
	if i := strings.LastIndexByte(h, '\n'); i >= 0 && i >= len(h)*3/4 {
		h = h[:i+1]
	}
	return h
}

// tailCut starts the tail at a character boundary and, when one is in its first quarter, after a
// line break.
func tailCut(t string) string {
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/4 {
		t = t[i+1:]
	}
	return t
}

// CapToolOutputs returns msgs with every tool result longer than maxTokens shortened by
// TruncateToolOutput, and how many were. It is meant for the copy sent to the model: the
// transcript keeps the full outputs. msgs is not modified.
func (c *Counter) CapToolOutputs(msgs []openai.ChatCompletionMessage, maxTokens int) ([]openai.ChatCompletionMessage, int) {
	out := msgs
	cut := 0
	for i, m := range msgs {
		if m.Role != openai.ChatMessageRoleTool || c.Text(m.Content) <= maxTokens {
			continue
		}
		if cut == 0 {
			out = append([]openai.ChatCompletionMessage(nil), msgs...)
		}
		out[i].Content = c.TruncateToolOutput(m.Content, maxTokens)
		cut++
	}
	return out, cut
}
