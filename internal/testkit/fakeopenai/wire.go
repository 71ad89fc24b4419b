package fakeopenai

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

const systemFingerprint = "fp_fakeopenai"

type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	// Usage is omitted unless the client asked for usage; then it is null
	// in every chunk but the last, as OpenAI sends it.
	Usage json.RawMessage `json:"usage,omitempty"`
	// Timings is llama.cpp's account of the call, in its last chunk.
	Timings json.RawMessage `json:"timings,omitempty"`
}

type chunkChoice struct {
	Index        int             `json:"index"`
	Delta        delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type delta struct {
	Role             string           `json:"role,omitempty"`
	Content          *string          `json:"content,omitempty"`
	Refusal          json.RawMessage  `json:"refusal,omitempty"`
	ReasoningContent *string          `json:"reasoning_content,omitempty"`
	Reasoning        *string          `json:"reasoning,omitempty"`
	ReasoningDetails []map[string]any `json:"reasoning_details,omitempty"`
	ToolCalls        []toolDelta      `json:"tool_calls,omitempty"`
	ExtraContent     map[string]any   `json:"extra_content,omitempty"`
}

type toolDelta struct {
	Index        int            `json:"index"`
	ID           string         `json:"id,omitempty"`
	Type         string         `json:"type,omitempty"`
	Function     functionDelta  `json:"function"`
	ExtraContent map[string]any `json:"extra_content,omitempty"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// usageWire is a reply's usage as the emulated server writes it (UsageShape).
type usageWire map[string]any

var jsonNull = json.RawMessage("null")

// plan is everything derived from a Reply that both response shapes share.
type plan struct {
	id, model    string
	created      int64
	finishReason string
	calls        []ToolCall
	usage        usageWire
	timings      json.RawMessage
}

func makePlan(provider Provider, rec Request, reply Reply, shape UsageShape) plan {
	p := plan{
		id:      fmt.Sprintf("chatcmpl-fake%06d", rec.Seq),
		model:   rec.Model,
		created: time.Now().Unix(),
	}
	if reply.Model != "" {
		p.model = reply.Model
	}
	p.finishReason = reply.FinishReason
	if p.finishReason == "" {
		p.finishReason = "stop"
		if len(reply.ToolCalls) > 0 {
			p.finishReason = "tool_calls"
		}
	}
	for i, c := range reply.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", rec.Seq, i)
		}
		p.calls = append(p.calls, c)
	}
	var u Usage
	if reply.Usage != nil {
		u = *reply.Usage
	} else {
		u = estimateUsage(rec, reply)
		if provider != OpenAI {
			// Thinking models' providers count the reasoning apart, as part of the completion.
			for _, r := range reply.Reasoning {
				u.ReasoningTokens += max(1, estimateTokens(r))
			}
		}
	}
	p.usage, p.timings = u.wire(shape)
	return p
}

// wire is u as a server of shape reports it, with llama.cpp's timings beside it.
func (u Usage) wire(shape UsageShape) (usageWire, json.RawMessage) {
	w := usageWire{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.PromptTokens + u.CompletionTokens}
	var timings json.RawMessage
	switch shape {
	case VLLMUsage:
		// vLLM started with --enable-prompt-tokens-details.
		w["prompt_tokens_details"] = map[string]int{"cached_tokens": u.CachedTokens}
		w["completion_tokens_details"] = nil
	case DeepSeekUsage:
		w["prompt_cache_hit_tokens"], w["prompt_cache_miss_tokens"] = u.CachedTokens, u.PromptTokens-u.CachedTokens
		w["completion_tokens_details"] = map[string]int{"reasoning_tokens": u.ReasoningTokens}
	case AnthropicUsage:
		w["cache_read_input_tokens"], w["cache_creation_input_tokens"] = u.CachedTokens, 0
	case LlamaCppUsage:
		timings, _ = json.Marshal(map[string]any{"cache_n": u.CachedTokens, "prompt_n": u.PromptTokens - u.CachedTokens,
			"predicted_n": u.CompletionTokens, "prompt_ms": 1.5, "predicted_ms": 10.5})
	default:
		w["prompt_tokens_details"] = map[string]int{"cached_tokens": u.CachedTokens, "audio_tokens": 0}
		w["completion_tokens_details"] = map[string]int{"reasoning_tokens": u.ReasoningTokens, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
	}
	return w, timings
}

func estimateUsage(rec Request, reply Reply) Usage {
	var u Usage
	for _, m := range rec.Messages {
		u.PromptTokens += 4 + estimateTokens(m.Content)
		for _, tc := range m.ToolCalls {
			u.PromptTokens += estimateTokens(tc.Name) + estimateTokens(tc.Arguments)
		}
	}
	for _, t := range rec.Tools {
		u.PromptTokens += estimateTokens(t.Name) + estimateTokens(t.Description) + estimateTokens(string(t.Parameters))
	}
	for _, c := range append(append([]string(nil), reply.Reasoning...), reply.Content...) {
		u.CompletionTokens += max(1, estimateTokens(c))
	}
	for _, c := range reply.ToolCalls {
		u.CompletionTokens += 3 + estimateTokens(c.Name) + estimateTokens(c.Arguments)
	}
	return u
}

// argumentChunks returns how a call's arguments are streamed.
func argumentChunks(c ToolCall) []string {
	if c.ArgumentChunks != nil {
		return c.ArgumentChunks
	}
	return splitArguments(c.Arguments, c.ArgumentChunkSize)
}

// openRouterComment is the SSE comment OpenRouter sends while a model works.
const openRouterComment = ": OPENROUTER PROCESSING\n\n"

// thinkTagChunks is how a <think> block's tags reach a client of a server without a reasoning
// parser: cut across chunks.
var (
	openTagChunks  = []string{"<thi", "nk>\n"}
	closeTagChunks = []string{"\n</th", "ink>\n\n"}
)

// reasoningDeltas are the deltas that carry reply's reasoning as provider p streams it, before
// the answer; the content deltas of think tags come back as content instead.
func (s *Server) reasoningDeltas(p Provider, reply Reply) []delta {
	if len(reply.Reasoning) == 0 {
		return nil
	}
	var out []delta
	text := func(t string) *string { return &t }
	full := strings.Join(reply.Reasoning, "")
	switch p {
	case DeepSeekThinking:
		for _, r := range reply.Reasoning {
			out = append(out, delta{ReasoningContent: text(r)})
		}
	case VLLMReasoning:
		for _, r := range reply.Reasoning {
			out = append(out, delta{Reasoning: text(r)})
		}
	case OpenRouterDeepSeek, OpenRouterSigned:
		format := "unknown"
		if p == OpenRouterSigned {
			format = "anthropic-claude-v1"
		}
		for _, r := range reply.Reasoning {
			out = append(out, delta{Reasoning: text(r), ReasoningDetails: []map[string]any{
				{"type": "reasoning.text", "text": r, "format": format, "index": 0}}})
		}
		if p == OpenRouterSigned {
			out = append(out, delta{ReasoningDetails: []map[string]any{
				{"type": "reasoning.text", "signature": s.sign("thinking", full), "index": 0},
				{"type": "reasoning.encrypted", "data": s.sign("encrypted", full), "id": "rs_fake", "format": format, "index": 1}}})
		}
	case LlamaCppThink, LlamaCppThinkOpenInPrompt:
		var pieces []string
		if p == LlamaCppThink {
			pieces = append(pieces, openTagChunks...)
		}
		pieces = append(pieces, reply.Reasoning...)
		pieces = append(pieces, closeTagChunks...)
		for _, c := range pieces {
			out = append(out, delta{Content: text(c)})
		}
	}
	return out
}

// streamEvents renders a streamed reply as provider sends it: the opening role event, then the
// events that follow it in order (reasoning, body chunks, finish chunk, in-band error or usage
// chunk, [DONE]). p is the reply's plan (makePlan).
func (s *Server) streamEvents(provider Provider, rec Request, reply Reply, p plan) (string, []string) {
	role, events := s.plainEvents(provider, rec, reply, p)
	if provider != OpenRouterDeepSeek && provider != OpenRouterSigned {
		return role, events
	}
	// OpenRouter keeps the connection alive with comments while the model works: before the
	// first data and now and then between.
	role = strings.Repeat(openRouterComment, 3) + role
	var out []string
	for i, ev := range events {
		if i > 0 && i%3 == 0 {
			out = append(out, openRouterComment)
		}
		out = append(out, ev)
	}
	return role, out
}

func (s *Server) plainEvents(provider Provider, rec Request, reply Reply, p plan) (string, []string) {
	includeUsage := rec.IncludeUsage()
	frame := func(choices []chunkChoice) string {
		c := chunk{ID: p.id, Object: "chat.completion.chunk", Created: p.created, Model: p.model, SystemFingerprint: systemFingerprint, Choices: choices}
		if includeUsage {
			c.Usage = jsonNull
		}
		b, _ := json.Marshal(c)
		return "data: " + string(b) + "\n\n"
	}
	choice := func(d delta) []chunkChoice {
		return []chunkChoice{{Index: 0, Delta: d, Logprobs: jsonNull}}
	}

	empty := ""
	role := frame(choice(delta{Role: "assistant", Content: &empty, Refusal: jsonNull}))

	var events []string
	for _, d := range s.reasoningDeltas(provider, reply) {
		events = append(events, frame(choice(d)))
	}
	for i, text := range reply.Content {
		t := text
		d := delta{Content: &t}
		if provider == Gemini3 && len(p.calls) == 0 && i == len(reply.Content)-1 {
			// An answer without calls carries its signature on its last part.
			d.ExtraContent = geminiSignature(s.sign("gemini-text", strings.Join(reply.Content, "")))
		}
		events = append(events, frame(choice(d)))
	}

	// Each call yields an opening delta (id, type, name, empty arguments)
	// followed by its argument pieces; every delta is its own chunk.
	perCall := make([][]toolDelta, len(p.calls))
	for i, c := range p.calls {
		opening := toolDelta{Index: i, ID: c.ID, Type: "function", Function: functionDelta{Name: c.Name}}
		if provider == Gemini3 && i == 0 {
			// Parallel calls: only the first carries the signature.
			opening.ExtraContent = geminiSignature(s.sign("gemini", c.ID, c.Name, strings.Join(argumentChunks(c), "")))
		}
		perCall[i] = append(perCall[i], opening)
		for _, piece := range argumentChunks(c) {
			perCall[i] = append(perCall[i], toolDelta{Index: i, Function: functionDelta{Arguments: piece}})
		}
	}
	emit := func(td toolDelta) {
		events = append(events, frame(choice(delta{ToolCalls: []toolDelta{td}})))
	}
	if reply.SequentialToolCalls {
		for _, deltas := range perCall {
			for _, td := range deltas {
				emit(td)
			}
		}
	} else {
		for step := 0; ; step++ {
			more := false
			for _, deltas := range perCall {
				if step < len(deltas) {
					emit(deltas[step])
					more = true
				}
			}
			if !more {
				break
			}
		}
	}

	if reply.StreamError != nil {
		b, _ := json.Marshal(map[string]any{"error": reply.StreamError.wire()})
		return role, append(events, "data: "+string(b)+"\n\n")
	}

	finish := p.finishReason
	events = append(events, frame([]chunkChoice{{Index: 0, Delta: delta{}, Logprobs: jsonNull, FinishReason: &finish}}))
	if includeUsage {
		u, _ := json.Marshal(p.usage)
		c := chunk{ID: p.id, Object: "chat.completion.chunk", Created: p.created, Model: p.model, SystemFingerprint: systemFingerprint, Choices: []chunkChoice{}, Usage: u,
			Timings: p.timings}
		b, _ := json.Marshal(c)
		events = append(events, "data: "+string(b)+"\n\n")
	}
	return role, append(events, "data: [DONE]\n\n")
}

type completionWire struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             usageWire          `json:"usage"`
	Timings           json.RawMessage    `json:"timings,omitempty"`
}

type completionChoice struct {
	Index        int             `json:"index"`
	Message      completionMsg   `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type completionMsg struct {
	Role             string           `json:"role"`
	Content          *string          `json:"content"`
	Refusal          json.RawMessage  `json:"refusal"`
	ReasoningContent *string          `json:"reasoning_content,omitempty"`
	Reasoning        *string          `json:"reasoning,omitempty"`
	ReasoningDetails []map[string]any `json:"reasoning_details,omitempty"`
	ToolCalls        []wireToolCall   `json:"tool_calls,omitempty"`
	ExtraContent     map[string]any   `json:"extra_content,omitempty"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	ExtraContent map[string]any `json:"extra_content,omitempty"`
}

// geminiSignature is extra_content as Gemini's OpenAI-compatible endpoint carries a signature.
func geminiSignature(sig string) map[string]any {
	return map[string]any{"google": map[string]any{"thought_signature": sig}}
}

// completion renders the non-streaming answer as provider sends it, p being its plan
// (makePlan); content is null when the model only calls tools, as OpenAI sends it.
func (s *Server) completion(provider Provider, reply Reply, p plan) completionWire {
	msg := completionMsg{Role: "assistant", Refusal: jsonNull}
	text := strings.Join(reply.Content, "")
	// Reasoning travels in the message's fields, or in front of the content as the stream has it.
	var thinkPrefix strings.Builder
	for _, d := range s.reasoningDeltas(provider, reply) {
		switch {
		case d.ReasoningContent != nil:
			msg.ReasoningContent = join(msg.ReasoningContent, *d.ReasoningContent)
		case d.Content != nil:
			thinkPrefix.WriteString(*d.Content)
		}
		if d.Reasoning != nil {
			msg.Reasoning = join(msg.Reasoning, *d.Reasoning)
		}
		msg.ReasoningDetails = append(msg.ReasoningDetails, d.ReasoningDetails...)
	}
	text = thinkPrefix.String() + text
	if msg.ReasoningDetails != nil {
		// An unstreamed answer carries each detail whole.
		msg.ReasoningDetails = wholeDetails(msg.ReasoningDetails)
	}
	if text != "" || len(p.calls) == 0 {
		msg.Content = &text
	}
	if provider == Gemini3 && len(p.calls) == 0 {
		msg.ExtraContent = geminiSignature(s.sign("gemini-text", strings.Join(reply.Content, "")))
	}
	for i, c := range p.calls {
		var tc wireToolCall
		tc.ID, tc.Type = c.ID, "function"
		tc.Function.Name = c.Name
		tc.Function.Arguments = strings.Join(argumentChunks(c), "")
		if provider == Gemini3 && i == 0 {
			tc.ExtraContent = geminiSignature(s.sign("gemini", c.ID, c.Name, tc.Function.Arguments))
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	return completionWire{
		ID:                p.id,
		Object:            "chat.completion",
		Created:           p.created,
		Model:             p.model,
		SystemFingerprint: systemFingerprint,
		Choices:           []completionChoice{{Index: 0, Message: msg, Logprobs: jsonNull, FinishReason: p.finishReason}},
		Usage:             p.usage,
		Timings:           p.timings,
	}
}

// wholeDetails joins the fragments of each detail (same index): text is joined, other fields
// taken from the fragment that has them.
func wholeDetails(frags []map[string]any) []map[string]any {
	var out []map[string]any
	at := map[any]map[string]any{}
	for _, f := range frags {
		d, ok := at[f["index"]]
		if !ok {
			d = map[string]any{}
			at[f["index"]] = d
			out = append(out, d)
		}
		for k, v := range f {
			if prev, had := d[k].(string); had && k == "text" {
				d[k] = prev + v.(string)
				continue
			}
			d[k] = v
		}
	}
	return out
}

func join(prev *string, more string) *string {
	if prev == nil {
		return &more
	}
	s := *prev + more
	return &s
}
