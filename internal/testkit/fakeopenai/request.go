package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Request is one recorded call to the fake, decoded for assertions. Raw
// keeps the body exactly as sent.
type Request struct {
	// Seq numbers requests from 1 in arrival order.
	Seq           int
	Received      time.Time
	Method        string
	Path          string
	Authorization string
	Header        http.Header
	Raw           []byte
	// DecodeError is set when the body was not valid JSON for a chat
	// completion; the other decoded fields are then empty.
	DecodeError string

	Model               string
	Messages            []Message
	Tools               []Tool
	ToolChoice          json.RawMessage
	Temperature         *float64
	MaxTokens           *int
	MaxCompletionTokens *int
	Stream              bool
	StreamOptions       *StreamOptions
	// How much a thinking model is asked to think, in each provider's words, as sent (nil or ""
	// when absent): OpenAI's reasoning_effort, DeepSeek's and Anthropic's thinking, OpenRouter's
	// reasoning, vLLM's and llama.cpp's chat_template_kwargs.
	ReasoningEffort    string
	Thinking           json.RawMessage
	ReasoningConfig    json.RawMessage
	ChatTemplateKwargs json.RawMessage
}

// ThinkingType is the request's thinking.type (DeepSeek's and Anthropic's switch), "" when absent.
func (r Request) ThinkingType() string {
	var t struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(r.Thinking, &t)
	return t.Type
}

// Message is one entry of the request's messages array.
type Message struct {
	Role string
	// Content is the text of the message; for an array of content parts it
	// is the concatenation of their text parts.
	Content string
	// ContentNull is true when content was absent or null, which OpenAI
	// treats differently from "".
	ContentNull bool
	RawContent  json.RawMessage
	Name        string
	ToolCallID  string
	ToolCalls   []RequestToolCall
	// The reasoning fields thinking models' clients send back, as sent: nil when absent.
	ReasoningContent json.RawMessage
	Reasoning        json.RawMessage
	ReasoningDetails json.RawMessage
	ExtraContent     json.RawMessage
}

// ReasoningText returns reasoning_content (else reasoning) when it is a string, and whether
// either field was sent at all.
func (m Message) ReasoningText() (string, bool) {
	present := false
	for _, raw := range []json.RawMessage{m.ReasoningContent, m.Reasoning} {
		if raw == nil || strings.TrimSpace(string(raw)) == "null" {
			continue
		}
		present = true
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
	}
	return "", present
}

// RequestToolCall is a tool call echoed back by the client in an assistant
// message.
type RequestToolCall struct {
	ID        string
	Type      string
	Name      string
	Arguments string
	// ExtraContent is the call's extra_content as sent (Gemini's thought signature).
	ExtraContent json.RawMessage
}

// ThoughtSignature is the call's extra_content.google.thought_signature, "" when absent.
func (c RequestToolCall) ThoughtSignature() string {
	var ec struct {
		Google struct {
			ThoughtSignature string `json:"thought_signature"`
		} `json:"google"`
	}
	_ = json.Unmarshal(c.ExtraContent, &ec)
	return ec.Google.ThoughtSignature
}

// Tool is a tool offered to the model.
type Tool struct {
	Type        string
	Name        string
	Description string
	Parameters  json.RawMessage
	Strict      bool
}

// StreamOptions mirrors the request's stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// HasTools reports whether tools were offered; a title-generation call, for
// example, offers none.
func (r Request) HasTools() bool { return len(r.Tools) > 0 }

// IncludeUsage reports whether the client asked for the final usage chunk.
func (r Request) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// LastMessage returns the last message, or the zero Message when there is
// none.
func (r Request) LastMessage() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// LastUserText returns the content of the last user message.
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// ToolNames lists the names of the offered tools in order.
func (r Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// APIKey returns the bearer token the client sent.
func (r Request) APIKey() string {
	return strings.TrimSpace(strings.TrimPrefix(r.Authorization, "Bearer "))
}

type wireRequest struct {
	Model               *string          `json:"model"`
	Messages            []wireMessage    `json:"messages"`
	Tools               []wireTool       `json:"tools"`
	ToolChoice          json.RawMessage  `json:"tool_choice"`
	Temperature         *float64         `json:"temperature"`
	MaxTokens           *int             `json:"max_tokens"`
	MaxCompletionTokens *int             `json:"max_completion_tokens"`
	Stream              *bool            `json:"stream"`
	StreamOptions       *json.RawMessage `json:"stream_options"`
	ReasoningEffort     *string          `json:"reasoning_effort"`
	Thinking            json.RawMessage  `json:"thinking"`
	Reasoning           json.RawMessage  `json:"reasoning"`
	ChatTemplateKwargs  json.RawMessage  `json:"chat_template_kwargs"`
}

type wireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name"`
	ToolCallID       *string         `json:"tool_call_id"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ReasoningDetails json.RawMessage `json:"reasoning_details"`
	ExtraContent     json.RawMessage `json:"extra_content"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
		ExtraContent json.RawMessage `json:"extra_content"`
	} `json:"tool_calls"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	} `json:"function"`
}

// decodeRequest fills rec from the body. The returned APIError is what
// OpenAI answers to a body it cannot use at all.
func decodeRequest(body []byte, rec *Request) (*wireRequest, *APIError) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		rec.DecodeError = err.Error()
		return nil, BadRequest("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", "")
	}
	if w.Model != nil {
		rec.Model = *w.Model
	}
	rec.ToolChoice = w.ToolChoice
	rec.Temperature = w.Temperature
	rec.MaxTokens = w.MaxTokens
	rec.MaxCompletionTokens = w.MaxCompletionTokens
	rec.Stream = w.Stream != nil && *w.Stream
	if w.ReasoningEffort != nil {
		rec.ReasoningEffort = *w.ReasoningEffort
	}
	rec.Thinking, rec.ReasoningConfig, rec.ChatTemplateKwargs = w.Thinking, w.Reasoning, w.ChatTemplateKwargs
	if w.StreamOptions != nil && string(*w.StreamOptions) != "null" {
		var so StreamOptions
		if err := json.Unmarshal(*w.StreamOptions, &so); err != nil {
			return &w, BadRequest(fmt.Sprintf("Invalid type for 'stream_options': expected an object, but got %s instead.", *w.StreamOptions), "stream_options")
		}
		rec.StreamOptions = &so
	}
	for i, m := range w.Messages {
		msg := Message{Role: m.Role, Name: m.Name, RawContent: m.Content, ReasoningContent: m.ReasoningContent,
			Reasoning: m.Reasoning, ReasoningDetails: m.ReasoningDetails, ExtraContent: m.ExtraContent}
		if m.ToolCallID != nil {
			msg.ToolCallID = *m.ToolCallID
		}
		text, null, err := decodeContent(m.Content)
		if err != nil {
			return &w, BadRequest(fmt.Sprintf("Invalid type for 'messages[%d].content': %v", i, err), fmt.Sprintf("messages.[%d].content", i))
		}
		msg.Content, msg.ContentNull = text, null
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, RequestToolCall{ID: tc.ID, Type: tc.Type, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
				ExtraContent: tc.ExtraContent})
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range w.Tools {
		tool := Tool{Type: t.Type}
		if t.Function != nil {
			tool.Name, tool.Description, tool.Parameters, tool.Strict = t.Function.Name, t.Function.Description, t.Function.Parameters, t.Function.Strict
		}
		rec.Tools = append(rec.Tools, tool)
	}
	return &w, nil
}

// decodeContent accepts the two shapes OpenAI accepts: a string, or an array
// of content parts whose text parts are joined.
func decodeContent(raw json.RawMessage) (text string, null bool, err error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "", true, nil
	}
	if strings.HasPrefix(s, `"`) {
		err = json.Unmarshal(raw, &text)
		return text, false, err
	}
	if strings.HasPrefix(s, "[") {
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", false, err
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), false, nil
	}
	return "", false, fmt.Errorf("expected one of a string or array of objects, but got %s instead", s)
}

var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

var knownRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// validate applies the checks OpenAI makes on a request before it runs the
// model, with OpenAI's wording, so that a transcript bug in the client fails
// in tests as it would in production.
func validate(w *wireRequest, rec *Request) *APIError {
	if w.Model == nil || *w.Model == "" {
		return BadRequest("you must provide a model parameter", "")
	}
	if w.Messages == nil {
		return BadRequest("Missing required parameter: 'messages'.", "messages")
	}
	if len(w.Messages) == 0 {
		return BadRequest("[] is too short - 'messages'", "messages")
	}
	if rec.StreamOptions != nil && !rec.Stream {
		return BadRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options")
	}
	if t := rec.Temperature; t != nil && (*t < 0 || *t > 2) {
		return BadRequest(fmt.Sprintf("Invalid 'temperature': decimal out of range. Expected a value between 0 and 2, but got %v instead.", *t), "temperature")
	}
	if choice := strings.TrimSpace(string(rec.ToolChoice)); choice != "" && choice != "null" {
		if len(w.Tools) == 0 {
			return BadRequest("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", "tool_choice")
		}
		switch choice {
		case `"none"`, `"auto"`, `"required"`:
		default:
			if !strings.HasPrefix(choice, "{") {
				return BadRequest(fmt.Sprintf("Invalid value: %s. Supported values are: 'none', 'auto', and 'required'.", choice), "tool_choice")
			}
		}
	}
	for i, t := range w.Tools {
		if t.Type != "function" {
			return BadRequest(fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type), fmt.Sprintf("tools[%d].type", i))
		}
		if t.Function == nil {
			return BadRequest(fmt.Sprintf("Missing required parameter: 'tools[%d].function'.", i), fmt.Sprintf("tools[%d].function", i))
		}
		if !toolNamePattern.MatchString(t.Function.Name) {
			return BadRequest(fmt.Sprintf("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i), fmt.Sprintf("tools[%d].function.name", i))
		}
		if p := strings.TrimSpace(string(t.Function.Parameters)); p != "" && !strings.HasPrefix(p, "{") {
			return BadRequest(fmt.Sprintf("Invalid type for 'tools[%d].function.parameters': expected an object, but got %s instead.", i, p), fmt.Sprintf("tools[%d].function.parameters", i))
		}
	}

	// pending holds the tool_call ids of the last assistant message that
	// have not been answered yet, in order.
	var pending []string
	pendingFrom := -1
	unanswered := func() *APIError {
		if len(pending) == 0 {
			return nil
		}
		return BadRequest("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "+strings.Join(pending, ", "), fmt.Sprintf("messages.[%d].role", pendingFrom))
	}
	for i, m := range rec.Messages {
		wm := w.Messages[i]
		if !knownRoles[m.Role] {
			e := BadRequest(fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role), fmt.Sprintf("messages[%d].role", i))
			e.Code = "invalid_value"
			return e
		}
		if m.Role == "tool" {
			if wm.ToolCallID == nil {
				return BadRequest(fmt.Sprintf("Missing required parameter: 'messages[%d].tool_call_id'.", i), fmt.Sprintf("messages[%d].tool_call_id", i))
			}
			at := indexOf(pending, m.ToolCallID)
			if at < 0 {
				if pendingFrom < 0 {
					return BadRequest("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", fmt.Sprintf("messages.[%d].role", i))
				}
				return BadRequest(fmt.Sprintf("Invalid parameter: 'tool_call_id' of '%s' not found in 'tool_calls' of previous message.", m.ToolCallID), fmt.Sprintf("messages.[%d].tool_call_id", i))
			}
			pending = append(pending[:at], pending[at+1:]...)
			continue
		}
		if err := unanswered(); err != nil {
			return err
		}
		pending, pendingFrom = nil, -1
		switch m.Role {
		case "user", "system", "developer":
			if m.ContentNull {
				return BadRequest("Invalid value for 'content': expected a string, got null.", fmt.Sprintf("messages.[%d].content", i))
			}
		case "assistant":
			if len(m.ToolCalls) > 0 {
				pendingFrom = i
				for j, tc := range m.ToolCalls {
					if tc.ID == "" {
						return BadRequest(fmt.Sprintf("Missing required parameter: 'messages[%d].tool_calls[%d].id'.", i, j), fmt.Sprintf("messages[%d].tool_calls[%d].id", i, j))
					}
					if tc.Type != "function" {
						return BadRequest(fmt.Sprintf("Invalid value: '%s'. Supported values are: 'function'.", tc.Type), fmt.Sprintf("messages[%d].tool_calls[%d].type", i, j))
					}
					pending = append(pending, tc.ID)
				}
			}
		}
	}
	return unanswered()
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
