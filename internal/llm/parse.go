package llm

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// wireChunk is one event of a stream, or a whole unstreamed answer: choices carry a delta or a
// message, whose fields are read one by one (answer).
type wireChunk struct {
	Choices []struct {
		Delta        map[string]rawJSON `json:"delta"`
		Message      map[string]rawJSON `json:"message"`
		FinishReason *string            `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	// Timings is llama.cpp's own account of the call, beside the usage.
	Timings *struct {
		// CacheN is how many prompt tokens came from the slot's cache.
		CacheN int64 `json:"cache_n"`
	} `json:"timings"`
	// Error is a failure sent in the stream itself (OpenAI's and OpenRouter's mid-stream errors).
	Error rawJSON `json:"error"`
}

// wireUsage is a call's usage with the fields in which providers report the prompt tokens their
// cache served, each its own way.
type wireUsage struct {
	openai.Usage
	// PromptCacheHitTokens is DeepSeek's.
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
	// CacheReadInputTokens is Anthropic's word, which gateways in front of Claude pass on.
	CacheReadInputTokens int64 `json:"cache_read_input_tokens"`
}

// cachedTokens is how many of the prompt's tokens the provider says its cache served: OpenAI's,
// vLLM's and most servers' prompt_tokens_details.cached_tokens, DeepSeek's
// prompt_cache_hit_tokens, Anthropic's cache_read_input_tokens, or llama.cpp's timings.cache_n.
// A provider that reports two of them reports the same count; the largest is taken.
func (c *wireChunk) cachedTokens() int64 {
	var n int64
	if u := c.Usage; u != nil {
		n = max(u.PromptCacheHitTokens, u.CacheReadInputTokens)
		if u.PromptTokensDetails != nil {
			n = max(n, int64(u.PromptTokensDetails.CachedTokens))
		}
	}
	if c.Timings != nil {
		n = max(n, c.Timings.CacheN)
	}
	return n
}

// maxUnknown bounds how much of reasoning fields of unknown shapes one answer keeps.
const maxUnknown = 1 << 20

// answer reads one model answer, chunk by chunk, into its answer text, reasoning, tool calls and
// the state the provider needs back, reporting each piece to deltas as it comes.
type answer struct {
	d       dialect
	deltas  Deltas
	began   time.Time
	first   time.Duration
	content strings.Builder
	think   *thinkSplitter
	// fieldText is the reasoning of reasoning_content or reasoning; detailText that of
	// reasoning_details, used only when no field carried any (OpenRouter sends both); thinkText
	// that of <think> blocks.
	fieldText, detailText, thinkText strings.Builder
	details                          detailsAccumulator
	calls                            toolCallAccumulator
	extra                            rawJSON
	unknown                          map[string][]rawJSON
	unknownSize                      int
	// whole: the answer comes as one message, not as a stream of deltas.
	whole bool
}

func newAnswer(d dialect, model string, deltas Deltas, began time.Time) *answer {
	a := &answer{d: d, deltas: deltas, began: began}
	if d.think {
		a.think = &thinkSplitter{omitsOpen: omitsOpeningTag.MatchString(model)}
	}
	return a
}

// take reads the fields of one delta (or of a whole message).
func (a *answer) take(fields map[string]rawJSON) {
	// vLLM has renamed reasoning_content to reasoning and may send both for a while: one is read.
	field, _ := a.text(fields, "reasoning_content")
	if r, _ := a.text(fields, "reasoning"); field == "" {
		field = r
	}
	if field != "" {
		a.started()
		a.fieldText.WriteString(field)
		a.reason(field)
		if a.think != nil && a.think.phase == phaseStart && a.think.held == "" {
			// The server parses reasoning out itself: its content is the answer, to be streamed
			// as it comes rather than held back for a closing tag that will never show.
			a.think = nil
		}
	}
	if raw, ok := fields["reasoning_details"]; ok && !isNull(raw) {
		texts, ok := a.details.add(raw)
		if !ok {
			a.keepUnknown("reasoning_details", raw)
		}
		for _, t := range texts {
			a.started()
			a.detailText.WriteString(t)
			if a.fieldText.Len() == 0 {
				a.reason(t)
			}
		}
	}
	if raw, ok := fields["content"]; ok && !isNull(raw) {
		a.takeContent(raw)
	}
	if raw, ok := fields["tool_calls"]; ok && !isNull(raw) {
		var frags []wireToolCallDelta
		if err := json.Unmarshal(raw, &frags); err != nil {
			a.keepUnknown("tool_calls", raw)
		}
		for i, f := range frags {
			if a.whole && f.Index == nil {
				f.Index = &i // an unstreamed message lists its calls whole, in order
			}
			a.started()
			call := a.calls.add(f)
			if a.deltas.ToolCall != nil {
				a.deltas.ToolCall(call)
			}
		}
	}
	if raw, ok := fields["extra_content"]; ok && !isNull(raw) {
		a.extra = append(rawJSON(nil), raw...)
	}
	for k, raw := range fields {
		if knownField[k] || isNull(raw) {
			continue
		}
		if l := strings.ToLower(k); strings.Contains(l, "reason") || strings.Contains(l, "think") || strings.Contains(l, "signature") {
			a.keepUnknown(k, raw)
		}
	}
}

// knownField are the message fields answer reads or knows to carry nothing it keeps.
var knownField = map[string]bool{"role": true, "content": true, "refusal": true, "reasoning_content": true, "reasoning": true,
	"reasoning_details": true, "tool_calls": true, "function_call": true, "extra_content": true, "name": true,
	"tool_call_id": true, "annotations": true, "audio": true}

// text reads a string field; a field of another shape is kept as unknown and reads as absent.
func (a *answer) text(fields map[string]rawJSON, key string) (string, bool) {
	raw, ok := fields[key]
	if !ok || isNull(raw) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		a.keepUnknown(key, raw)
		return "", false
	}
	return s, true
}

// takeContent takes a delta's content: text, or (Mistral's reasoning models) an array of parts,
// whose text parts are the answer and whose thinking parts are reasoning. A shape neither is
// kept as unknown.
func (a *answer) takeContent(raw rawJSON) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if text != "" {
			a.started()
			a.answerText(text)
		}
		return
	}
	var parts []map[string]rawJSON
	if json.Unmarshal(raw, &parts) != nil {
		a.keepUnknown("content", raw)
		return
	}
	for _, p := range parts {
		var typ string
		_ = json.Unmarshal(p["type"], &typ)
		switch typ {
		case "text":
			var t string
			if json.Unmarshal(p["text"], &t) == nil && t != "" {
				a.started()
				a.answerText(t)
			}
		case "thinking", "reasoning":
			if t := partText(p[typ]) + partText(p["text"]); t != "" {
				a.started()
				a.fieldText.WriteString(t)
				a.reason(t)
			}
		default:
			a.keepUnknown("content", raw)
		}
	}
}

// partText is the text of a part's value: a string, or the text parts of an array.
func partText(raw rawJSON) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// answerText takes a piece of content, separating reasoning in <think> tags where the dialect
// expects it.
func (a *answer) answerText(text string) {
	if a.think == nil {
		a.emit(text)
		return
	}
	r, ans := a.think.push(text)
	a.thought(r)
	a.emit(ans)
}

func (a *answer) emit(text string) {
	if text == "" {
		return
	}
	a.content.WriteString(text)
	if a.deltas.Content != nil {
		a.deltas.Content(text)
	}
}

func (a *answer) thought(text string) {
	if text == "" {
		return
	}
	a.thinkText.WriteString(text)
	a.reason(text)
}

func (a *answer) reason(text string) {
	if a.deltas.Reasoning != nil {
		a.deltas.Reasoning(text)
	}
}

func (a *answer) started() {
	// An unstreamed answer arrives whole: it has no first token to time.
	if a.first == 0 && !a.whole {
		a.first = time.Since(a.began)
	}
}

// keepUnknown keeps a reasoning field of a shape the copilot does not know, as it arrived.
func (a *answer) keepUnknown(key string, raw rawJSON) {
	if a.unknownSize+len(raw) > maxUnknown {
		return
	}
	if a.unknown == nil {
		a.unknown = map[string][]rawJSON{}
	}
	a.unknown[key] = append(a.unknown[key], append(rawJSON(nil), raw...))
	a.unknownSize += len(raw)
}

// done ends the content: what the think splitter held back is given out.
func (a *answer) done() {
	if a.think == nil {
		return
	}
	r, ans := a.think.end()
	a.thought(r)
	a.emit(ans)
}

// fill puts what was read into ans.
func (a *answer) fill(ans *Answer) {
	ans.Content = a.content.String()
	reasoning := a.fieldText.String()
	if reasoning == "" {
		reasoning = a.detailText.String()
	}
	if t := strings.TrimSpace(a.thinkText.String()); t != "" {
		if reasoning != "" {
			reasoning += "\n\n"
		}
		reasoning += t
	}
	ans.Reasoning = reasoning
	ans.FirstToken = a.first
	ans.details = a.details.whole()
	ans.extra = a.extra
	ans.unknown = a.unknown
}

func isNull(raw rawJSON) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// wireToolCallDelta is a fragment of a tool call, with the extra_content Gemini puts on it.
type wireToolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	ExtraContent rawJSON `json:"extra_content"`
}

// toolCallAccumulator joins the fragments of a stream's tool calls, keyed by their index.
type toolCallAccumulator struct {
	byIndex map[int]*partialCall
	// last is the index of the call the latest fragment went to.
	last int
}

type partialCall struct {
	id, name string
	args     strings.Builder
	extra    rawJSON
}

// add appends one fragment and returns its call as far as it has arrived.
func (calls *toolCallAccumulator) add(frag wireToolCallDelta) ToolCall {
	if calls.byIndex == nil {
		calls.byIndex = map[int]*partialCall{}
	}
	var idx int
	switch {
	case frag.Index != nil:
		idx = *frag.Index
	case frag.ID == "" && len(calls.byIndex) > 0:
		// Providers without indexes continue the call of the fragment before, whatever index
		// that one had.
		idx = calls.last
	default:
		// A new call without an index goes after every call so far.
		for i := range calls.byIndex {
			idx = max(idx, i+1)
		}
	}
	calls.last = idx
	c := calls.byIndex[idx]
	if c == nil {
		c = &partialCall{}
		calls.byIndex[idx] = c
	}
	if frag.ID != "" {
		c.id = frag.ID
	}
	if frag.Function.Name != "" {
		c.name = frag.Function.Name
	}
	if !isNull(frag.ExtraContent) {
		c.extra = append(rawJSON(nil), frag.ExtraContent...)
	}
	c.args.WriteString(frag.Function.Arguments)
	return ToolCall{Index: idx, ID: c.id, Name: c.name, Arguments: c.args.String(), extra: c.extra}
}

// whole returns the calls in the order of their index.
func (calls *toolCallAccumulator) whole() []ToolCall {
	idxs := make([]int, 0, len(calls.byIndex))
	for i := range calls.byIndex {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	var out []ToolCall
	for _, i := range idxs {
		c := calls.byIndex[i]
		out = append(out, ToolCall{Index: i, ID: c.id, Name: c.name, Arguments: c.args.String(), extra: c.extra})
	}
	return out
}

// detailsAccumulator joins OpenRouter's reasoning_details. A stream sends each detail in
// fragments that share its index (and type): their text, summary and data are joined and their
// other fields (signature, id, format) taken as they come. A detail that arrived whole is kept
// byte for byte.
type detailsAccumulator struct {
	items []*detail
	byKey map[detailKey]*detail
}

type detail struct {
	raw    rawJSON            // as received, while it is one fragment
	fields map[string]rawJSON // its fields, once a second fragment joined it
	order  []string           // field order of fields, as first seen
}

type detailKey struct {
	index int
	typ   string
}

// add takes one reasoning_details array and returns the reasoning text it carries (the text
// and summary of its entries); ok is false when it is not an array.
func (d *detailsAccumulator) add(raw rawJSON) (texts []string, ok bool) {
	var entries []rawJSON
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, false
	}
	for _, e := range entries {
		var f map[string]rawJSON
		if err := json.Unmarshal(e, &f); err != nil {
			// Not an object: kept, in its place, as it is.
			d.items = append(d.items, &detail{raw: append(rawJSON(nil), e...)})
			continue
		}
		for _, k := range []string{"text", "summary"} {
			var s string
			if json.Unmarshal(f[k], &s) == nil && s != "" {
				texts = append(texts, s)
			}
		}
		var idx *int
		var typ string
		_ = json.Unmarshal(f["index"], &idx)
		_ = json.Unmarshal(f["type"], &typ)
		if idx == nil {
			d.items = append(d.items, &detail{raw: append(rawJSON(nil), e...)})
			continue
		}
		key := detailKey{*idx, typ}
		if prev := d.byKey[key]; prev != nil {
			prev.join(e, f)
			continue
		}
		item := &detail{raw: append(rawJSON(nil), e...)}
		d.items = append(d.items, item)
		if d.byKey == nil {
			d.byKey = map[detailKey]*detail{}
		}
		d.byKey[key] = item
	}
	return texts, true
}

// join adds a later fragment of the same detail.
func (it *detail) join(raw rawJSON, f map[string]rawJSON) {
	if it.fields == nil {
		it.fields = map[string]rawJSON{}
		it.order = objectKeys(it.raw)
		_ = json.Unmarshal(it.raw, &it.fields)
	}
	for _, k := range objectKeys(raw) {
		v := f[k]
		old, had := it.fields[k]
		if !had {
			it.order = append(it.order, k)
		}
		var a, b string
		if had && (k == "text" || k == "summary" || k == "data") && json.Unmarshal(old, &a) == nil && json.Unmarshal(v, &b) == nil {
			joined, _ := json.Marshal(a + b)
			it.fields[k] = joined
			continue
		}
		if isNull(v) && had {
			continue
		}
		it.fields[k] = v
	}
	it.raw = nil
}

// value is the detail as it goes back: as received, or its joined fields in their first order.
func (it *detail) value() rawJSON {
	if it.raw != nil {
		return it.raw
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range it.order {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(it.fields[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func (d *detailsAccumulator) whole() []rawJSON {
	if len(d.items) == 0 {
		return nil
	}
	out := make([]rawJSON, len(d.items))
	for i, it := range d.items {
		out[i] = it.value()
	}
	return out
}

// objectKeys lists the keys of a JSON object in the order they are written.
func objectKeys(raw rawJSON) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip rawJSON
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}
