package fakeopenai

import (
	"encoding/json"
	"fmt"
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
}

type chunkChoice struct {
	Index        int             `json:"index"`
	Delta        delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	Refusal   json.RawMessage `json:"refusal,omitempty"`
	ToolCalls []toolDelta     `json:"tool_calls,omitempty"`
}

type toolDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type usageWire struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	TotalTokens             int `json:"total_tokens"`
	PromptTokensDetails     any `json:"prompt_tokens_details"`
	CompletionTokensDetails any `json:"completion_tokens_details"`
}

var jsonNull = json.RawMessage("null")

// plan is everything derived from a Reply that both response shapes share.
type plan struct {
	id, model    string
	created      int64
	finishReason string
	calls        []ToolCall
	usage        usageWire
}

func makePlan(rec Request, reply Reply) plan {
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
	}
	p.usage = usageWire{
		PromptTokens:            u.PromptTokens,
		CompletionTokens:        u.CompletionTokens,
		TotalTokens:             u.PromptTokens + u.CompletionTokens,
		PromptTokensDetails:     map[string]int{"cached_tokens": 0, "audio_tokens": 0},
		CompletionTokensDetails: map[string]int{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
	return p
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
	for _, c := range reply.Content {
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

// streamEvents renders a streamed reply: the opening role event, then the
// events that follow it in order (body chunks, finish chunk, in-band error
// or usage chunk, [DONE]).
func streamEvents(rec Request, reply Reply) (string, []string) {
	p := makePlan(rec, reply)
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
	for _, text := range reply.Content {
		t := text
		events = append(events, frame(choice(delta{Content: &t})))
	}

	// Each call yields an opening delta (id, type, name, empty arguments)
	// followed by its argument pieces; every delta is its own chunk.
	perCall := make([][]toolDelta, len(p.calls))
	for i, c := range p.calls {
		perCall[i] = append(perCall[i], toolDelta{Index: i, ID: c.ID, Type: "function", Function: functionDelta{Name: c.Name}})
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
		c := chunk{ID: p.id, Object: "chat.completion.chunk", Created: p.created, Model: p.model, SystemFingerprint: systemFingerprint, Choices: []chunkChoice{}, Usage: u}
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
}

type completionChoice struct {
	Index        int             `json:"index"`
	Message      completionMsg   `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type completionMsg struct {
	Role      string          `json:"role"`
	Content   *string         `json:"content"`
	Refusal   json.RawMessage `json:"refusal"`
	ToolCalls []wireToolCall  `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// completion renders the non-streaming answer; content is null when the
// model only calls tools, as OpenAI sends it.
func completion(rec Request, reply Reply) completionWire {
	p := makePlan(rec, reply)
	msg := completionMsg{Role: "assistant", Refusal: jsonNull}
	if len(reply.Content) > 0 || len(p.calls) == 0 {
		text := ""
		for _, c := range reply.Content {
			text += c
		}
		msg.Content = &text
	}
	for _, c := range p.calls {
		var tc wireToolCall
		tc.ID, tc.Type = c.ID, "function"
		tc.Function.Name = c.Name
		for _, piece := range argumentChunks(c) {
			tc.Function.Arguments += piece
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
	}
}
