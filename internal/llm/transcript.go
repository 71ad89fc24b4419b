package llm

import (
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/contextwindow"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// This file is the one place where a stored transcript becomes a request's messages and a
// model's answer becomes a transcript row, in the dialect of the configuration's provider and
// model (dialect.go).

// Messages is the request for s's model: the system text, then the transcript rows as that
// model's dialect takes them. Each assistant row carries back the reasoning state its provider
// needs, when s is the configuration that produced it; an assistant row with nothing for the
// model (only a failed turn's error, which providers refuse) is left out. rows are the conversation as the
// model may see it: redacted, without the message the call is about to write.
//
// A model-context row (the lab as the copilot showed it to the model) is added to the end of the
// message before it, a person's message or a tool's result, as it was when the model first read
// it: a later request then shows the same bytes again, and a server's prefix cache reuses them.
// It is not a message of its own because templates and providers refuse what that would take:
// Qwen 3.5's templates a system message after the first, Mistral's a user message after a tool's
// result or after another user message, and Anthropic's and Gemini's endpoints move every system
// message to the top. Only after an assistant message, where no provider minds one, is it a user
// message of its own. Its metadata may restate it ("restate"): what every model-context row so far
// amounts to, for a request whose conversation starts after them (Fit).
func Messages(s llmconfig.Settings, system string, rows []models.ChatMessage) []Message {
	msgs := make([]Message, 0, 1+len(rows))
	msgs = append(msgs, Text(openai.ChatMessageRoleSystem, system))
	first := len(msgs)
	var states []*models.ChatMessage // the row of each transcript message, aligned with msgs[first:]
	restate := ""
	for i := range rows {
		m := &rows[i]
		if m.ModelContext {
			if m.Content != "" {
				if n := len(msgs) - 1; n >= first && (msgs[n].Role == openai.ChatMessageRoleUser || msgs[n].Role == openai.ChatMessageRoleTool) {
					msgs[n].Content += contextSeparator + m.Content
					msgs[n].context += contextSeparator + m.Content
				} else {
					msgs = append(msgs, Message{ChatCompletionMessage: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser,
						Content: m.Content}, restate: restate})
					states = append(states, m)
				}
			}
			if r := restatement(m.Metadata); r != "" {
				restate = r
			}
			continue
		}
		if m.Role == openai.ChatMessageRoleAssistant && m.Content == "" && m.ToolCalls == "" {
			continue
		}
		msgs = append(msgs, Message{ChatCompletionMessage: openAIMessage(*m), restate: restate})
		states = append(states, m)
	}
	replayState(s, dialectFor(s), msgs[first:], states)
	return msgs
}

// contextSeparator sets model-context text apart from the message it is added to.
const contextSeparator = "\n\n"

// restatement is the "restate" of a model-context row's metadata, "" when it has none.
func restatement(metadata string) string { return models.Restatement(metadata) }

// openAIMessage is a stored message as the chat-completions API takes it.
func openAIMessage(m models.ChatMessage) openai.ChatCompletionMessage {
	om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
	if m.Role == openai.ChatMessageRoleTool {
		om.Name = ""
	}
	if m.ToolCalls != "" {
		var recs []models.ToolCallRecord
		if json.Unmarshal([]byte(m.ToolCalls), &recs) == nil {
			for _, r := range recs {
				om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: r.ID, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: r.Function.Name, Arguments: r.Function.Arguments}})
			}
		}
	}
	return om
}

// replayState puts on each assistant message what d sends back with it. The conversation is cut
// into exchanges, each a user message and what followed it; what a provider needs depends on
// whether the model called tools in that exchange, and on whether it is the one in progress.
func replayState(s llmconfig.Settings, d dialect, msgs []Message, rows []*models.ChatMessage) {
	if d.replay == replayNone {
		return
	}
	for start := 0; start < len(msgs); {
		end := start + 1
		for end < len(msgs) && msgs[end].Role != openai.ChatMessageRoleUser {
			end++
		}
		tools, current := false, end == len(msgs)
		for i := start; i < end; i++ {
			tools = tools || len(msgs[i].ToolCalls) > 0
		}
		for i := start; i < end; i++ {
			if msgs[i].Role == openai.ChatMessageRoleAssistant {
				replayOne(s, d, &msgs[i], rows[i], tools, current)
			}
		}
		start = end
	}
}

// replayOne puts what d sends back on one assistant message. tools: the model called tools in
// its exchange; current: that exchange is the one in progress.
func replayOne(s llmconfig.Settings, d dialect, m *Message, row *models.ChatMessage, tools, current bool) {
	st, ok := decodeState(row.ReasoningState)
	own := ok && st.Source.made(s)
	switch d.replay {
	case replayReasoningContent:
		// DeepSeek: between two user messages where the model called tools, every assistant
		// message carries its reasoning_content in every later request, or the request is
		// refused; elsewhere it is ignored, so it is not sent. A message another model wrote has
		// no reasoning of this model's: it goes back empty.
		if !tools {
			return
		}
		m.replay = &replay{field: "reasoning_content"}
		if own {
			m.ReasoningContent = row.Reasoning
		}
	case replayOpenRouter:
		// OpenRouter passes reasoning and reasoning_details on to the model behind it, which may
		// refuse a tool-calling exchange without them (DeepSeek) or validate their signatures
		// (Anthropic, Gemini): they go back as they came, or empty from another model.
		if !tools {
			return
		}
		m.replay = &replay{field: "reasoning"}
		if own {
			m.ReasoningContent = row.Reasoning
			m.replay.details = st.Details
		}
	case replayGemini:
		// Gemini: each tool call's signature goes back where it came; the calls of the turn in
		// progress are validated, and a call no Gemini 3 model signed (another model's, in a
		// turn that changed configuration midway) gets the value Google gives for that.
		r := &replay{}
		if own {
			r.extra, r.calls = st.Extra, st.Calls
		}
		if current && len(m.ToolCalls) > 0 && geminiValidates.MatchString(s.Model) && len(r.calls[m.ToolCalls[0].ID]) == 0 {
			calls := map[string]rawJSON{}
			for k, v := range r.calls {
				calls[k] = v
			}
			calls[m.ToolCalls[0].ID] = rawJSON(`{"google":{"thought_signature":"` + skipSignature + `"}}`)
			r.calls = calls
		}
		if r.extra != nil || len(r.calls) > 0 {
			m.replay = r
		}
	}
}

// Fit keeps msgs inside s's context window (llmconfig.Settings.FitContext): old turns and long
// tool results go, and each kept message keeps what its dialect sends back. When old turns go,
// the first message kept opens with the restatement of the model-context rows dropped with them
// (Messages), so the model still knows the lab; its cost is counted. A tool result that is cut
// keeps the model-context text added to its end whole.
func Fit(s llmconfig.Settings, msgs []Message, tools []openai.Tool) ([]Message, contextwindow.Fitted) {
	f := s.FitContextOpening(OpenAI(msgs), tools, func(c *contextwindow.Counter, i int) int {
		if msgs[i].restate == "" {
			return 0
		}
		return c.Text(msgs[i].restate + contextSeparator)
	})
	out := make([]Message, len(f.Messages))
	opened := f.DroppedTurns == 0
	for i, m := range f.Messages {
		src := msgs[f.From[i]]
		if ctx := src.context; ctx != "" && m.Content != src.Content && strings.HasSuffix(src.Content, ctx) {
			c := contextwindow.ForModel(s.Model)
			m.Content = c.TruncateToolOutput(strings.TrimSuffix(src.Content, ctx), max(0, c.Text(m.Content)-c.Text(ctx))) + ctx
		}
		if !opened && m.Role != openai.ChatMessageRoleSystem {
			opened = true
			if src.restate != "" {
				m.Content = src.restate + contextSeparator + m.Content
			}
		}
		out[i] = Message{ChatCompletionMessage: m, replay: src.replay}
	}
	return out, f
}

// AnswerRow is what of an answer goes into its assistant message row: the answer as content, its
// reasoning beside it, its tool calls when the call completed (a failed call's are incomplete,
// and nothing will run them), and the state s's provider needs back with it, marked as s's. The
// caller adds the row's place in the transcript and its metadata.
func AnswerRow(s llmconfig.Settings, a Answer, complete bool) models.ChatMessage {
	row := models.ChatMessage{Role: openai.ChatMessageRoleAssistant, Content: a.Content, Reasoning: a.Reasoning}
	st := state{Source: sourceOf(s), Details: a.details, Extra: a.extra, Unknown: a.unknown}
	if complete && len(a.ToolCalls) > 0 {
		records := make([]models.ToolCallRecord, len(a.ToolCalls))
		for i, c := range a.ToolCalls {
			records[i].ID, records[i].Type = c.ID, "function"
			records[i].Function.Name, records[i].Function.Arguments = c.Name, c.Arguments
			if len(c.extra) > 0 {
				if st.Calls == nil {
					st.Calls = map[string]rawJSON{}
				}
				st.Calls[c.ID] = c.extra
			}
		}
		callsJSON, _ := json.Marshal(records)
		row.ToolCalls = string(callsJSON)
	}
	if strings.TrimSpace(a.Reasoning) != "" || len(st.Details) > 0 || len(st.Calls) > 0 || st.Extra != nil || len(st.Unknown) > 0 {
		b, _ := json.Marshal(st)
		row.ReasoningState = string(b)
	}
	return row
}
