// Package contextwindow fits a chat transcript into a model's context window before every LLM
// call: it counts tokens (exactly for OpenAI models, with a documented estimate for the rest),
// works out the budget a configuration leaves for the conversation, drops whole turns from the
// oldest without ever orphaning a tool result, and shortens long tool outputs for the model.
package contextwindow

import (
	"encoding/json"
	"hash/maphash"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	openai "github.com/sashabaranov/go-openai"
	"github.com/tiktoken-go/tokenizer"
)

// Token accounting of the chat format, after OpenAI's published counting recipe: every message
// costs a few tokens of framing beyond its text, and so does every tool call.
const (
	perMessage  = 3
	perName     = 1
	perToolCall = 4
	// perImage is what one image part costs at most in OpenAI's tiling scheme for a detailed
	// 512-pixel tile plus the base cost; used for every image so a transcript is never undercounted.
	perImage = 765
	// perTool is the framing of one function definition in the request's tools list.
	perTool = 8
)

// EstimateMargin is how much the cl100k_base count of a text is inflated for a model whose
// tokenizer is not available here (Llama, Qwen, Mistral, DeepSeek, Gemma …). Their BPE
// vocabularies cut English, code and CLI output into roughly as many pieces as cl100k_base does
// (within ±15 %), older or smaller vocabularies into up to ~25 % more; 1.25 keeps the estimate on
// the safe side, so a trimmed transcript does not overflow a window it was measured against.
const EstimateMargin = 1.25

// The vocabularies are built on first use, each on its own: they are large maps (o200k_base
// about 7 MB, cl100k_base 4 MB of heap), so a process pays only for the one its model counts
// with, and one that never counts for neither. The codecs are safe for concurrent use.
var (
	o200k  = sync.OnceValue(func() tokenizer.Codec { return vocabulary(tokenizer.O200kBase) })
	cl100k = sync.OnceValue(func() tokenizer.Codec { return vocabulary(tokenizer.Cl100kBase) })
)

func vocabulary(enc tokenizer.Encoding) tokenizer.Codec {
	c, err := tokenizer.Get(enc)
	if err != nil {
		panic("contextwindow: " + string(enc) + " vocabulary is not compiled in: " + err.Error())
	}
	return c
}

// Counter counts tokens the way one model does. Its counts are exact for OpenAI models (the
// vocabularies are compiled in, nothing is downloaded) and an over-estimate otherwise.
type Counter struct {
	encoding string
	margin   float64
	codec    func() tokenizer.Codec
	// bound: counts are upper bounds made without the vocabulary (Bounded).
	bound bool
}

// Bounded is c counting upper bounds of its counts without its vocabulary: a byte-level BPE
// token is at least one byte, so a text has at most as many tokens as bytes (times the
// estimate's margin, as c's own counts are). Most model calls fit their window with room to
// spare, which these bounds prove without building a vocabulary of several megabytes.
func (c *Counter) Bounded() *Counter {
	b := *c
	b.bound = true
	return &b
}

// cacheName keys the counts c remembers: a bound is a byte count, whatever the vocabulary.
func (c *Counter) cacheName() string {
	if c.bound {
		return "bytes"
	}
	return c.encoding
}

var (
	o200kModel  = regexp.MustCompile(`^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|chatgpt-|codex-|o[1-9](-|$))`)
	cl100kModel = regexp.MustCompile(`^(gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada)`)
)

// ForModel returns the counter for a model name as a provider knows it. A router's vendor prefix
// ("openai/gpt-4o-mini" on OpenRouter) and a fine-tune prefix ("ft:gpt-4o-…") are understood.
// Azure deployments carry names of their operator's choosing and are counted as estimates
// unless the deployment is named after its model.
func ForModel(model string) *Counter {
	name := strings.ToLower(strings.TrimSpace(model))
	name = strings.TrimPrefix(name, "ft:")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	switch {
	case o200kModel.MatchString(name):
		return &Counter{encoding: "o200k_base", margin: 1, codec: o200k}
	case cl100kModel.MatchString(name):
		return &Counter{encoding: "cl100k_base", margin: 1, codec: cl100k}
	default:
		return Estimator
	}
}

// Estimator is the counter for a model whose tokenizer is unknown: cl100k_base times
// EstimateMargin. The package-level functions use it.
var Estimator = &Counter{encoding: "cl100k_base", margin: EstimateMargin, codec: cl100k}

// Exact reports whether counts are the model's own (true) or an estimate (false).
func (c *Counter) Exact() bool { return c.margin == 1 }

// Encoding names the vocabulary counts are made with.
func (c *Counter) Encoding() string { return c.encoding }

// raw is the vocabulary's own count of s. The codec cannot fail on a Go string in its default
// error mode; if it ever did, a byte count is the safe answer (no token is shorter than a byte).
func (c *Counter) raw(s string) int {
	if s == "" || c.bound {
		return len(s)
	}
	if len(s) < cacheMinBytes {
		return c.count(s)
	}
	key := countKey{c.encoding, maphash.String(cacheSeed, s), len(s)}
	if n, ok := counts.Get(key); ok {
		return n
	}
	n := c.count(s)
	counts.Add(key, n)
	return n
}

func (c *Counter) count(s string) int {
	n, err := c.codec().Count(s)
	if err != nil {
		return len(s)
	}
	return n
}

// The transcript is counted again before every LLM call of a turn, and tokenizing runs at about
// 10 MB/s; remembering the counts of long texts (tool outputs) makes the repeats free. The
// cache keeps the most recently used counts, and forgets those of conversations that went quiet.
const (
	cacheMinBytes = 512
	cacheEntries  = 8192
	cacheTTL      = 30 * time.Minute
)

var cacheSeed = maphash.MakeSeed()

type countKey struct {
	encoding string
	hash     uint64
	size     int
}

var counts = expirable.NewLRU[countKey, int](cacheEntries, nil, cacheTTL)

func (c *Counter) scale(n int) int {
	if c.margin == 1 || n == 0 {
		return n
	}
	return int(math.Ceil(float64(n) * c.margin))
}

// Text is the number of tokens of s.
func (c *Counter) Text(s string) int { return c.scale(c.raw(s)) }

// Message is what one message costs in a request: its framing, text, name, image parts and the
// name and arguments of every tool call it makes (arguments are often the biggest part of an
// assistant message and must not count as nothing).
func (c *Counter) Message(m openai.ChatCompletionMessage) int {
	n := perMessage + c.Text(m.Role) + c.Text(m.Content) + c.Text(m.Refusal) + c.Text(m.ReasoningContent)
	if m.Name != "" {
		n += perName + c.Text(m.Name)
	}
	for _, p := range m.MultiContent {
		if p.ImageURL != nil {
			n += perImage
		}
		n += c.Text(p.Text)
	}
	if m.FunctionCall != nil {
		n += perToolCall + c.Text(m.FunctionCall.Name) + c.Text(m.FunctionCall.Arguments)
	}
	for _, tc := range m.ToolCalls {
		n += perToolCall + c.Text(tc.ID) + c.Text(tc.Function.Name) + c.Text(tc.Function.Arguments)
	}
	if m.ToolCallID != "" {
		n += c.Text(m.ToolCallID)
	}
	return n
}

// Messages is the sum of Message over msgs.
func (c *Counter) Messages(msgs []openai.ChatCompletionMessage) int {
	n := 0
	for _, m := range msgs {
		n += c.Message(m)
	}
	return n
}

// Tools is what the request's tool definitions cost: each definition as the JSON the provider
// receives, plus its framing.
func (c *Counter) Tools(tools []openai.Tool) int {
	n := 0
	for _, t := range tools {
		raw, ok := c.rawTool(t)
		if !ok {
			// A schema that cannot be encoded cannot be sent either; count a typical tool.
			n += 1000
			continue
		}
		n += perTool + c.scale(raw)
	}
	return n
}

// rawTool counts one definition; false when it cannot be encoded. The same definitions come with
// every call of every turn, and encoding them again cost more than looking their count up: a
// definition whose parameters are already JSON is found by a hash of its parts, and encoded only
// the first time.
func (c *Counter) rawTool(t openai.Tool) (int, bool) {
	key, keyed := toolKey(c.cacheName(), t)
	if keyed {
		if n, ok := counts.Get(key); ok {
			return n, true
		}
	}
	b, err := json.Marshal(t)
	if err != nil {
		return 0, false
	}
	n := c.raw(string(b))
	if keyed {
		counts.Add(key, n)
	}
	return n, true
}

// toolKey is the count cache's key of a definition, from the parts its JSON is made of; false
// when a part is not plain data (parameters given as a Go value, Responses-API properties).
// Its size is negative, so no text's key equals it.
func toolKey(encoding string, t openai.Tool) (countKey, bool) {
	if t.Function == nil || len(t.Parameters) > 0 {
		return countKey{}, false
	}
	var params []byte
	switch p := t.Function.Parameters.(type) {
	case json.RawMessage:
		params = p
	case []byte:
		params = p
	case nil:
	default:
		return countKey{}, false
	}
	var h maphash.Hash
	h.SetSeed(cacheSeed)
	for _, part := range []string{string(t.Type), t.Function.Name, t.Function.Description, strconv.FormatBool(t.Function.Strict)} {
		_, _ = h.WriteString(part)
		_ = h.WriteByte(0)
	}
	_, _ = h.Write(params)
	return countKey{encoding, h.Sum64(), -1 - len(t.Function.Name) - len(t.Function.Description) - len(params)}, true
}

// Text counts s with the Estimator.
func Text(s string) int { return Estimator.Text(s) }

// Messages counts msgs with the Estimator.
func Messages(msgs []openai.ChatCompletionMessage) int { return Estimator.Messages(msgs) }
