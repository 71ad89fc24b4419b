package contextwindow

import (
	"fmt"
	"sort"

	openai "github.com/sashabaranov/go-openai"
)

func isSystem(m openai.ChatCompletionMessage) bool {
	return m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleDeveloper
}

// Validate checks the rule every OpenAI-compatible provider enforces on a message sequence: an
// assistant message with tool_calls is followed directly by one tool message per call (in any
// order), and a tool message appears only there, answering a call of that assistant message.
// Providers reject anything else with a 400.
func Validate(msgs []openai.ChatCompletionMessage) error {
	var open map[string]bool // calls of the last assistant message not answered yet
	openAt := -1
	for i, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			if open == nil {
				return fmt.Errorf("message %d: tool result %q does not follow an assistant message that called it", i, m.ToolCallID)
			}
			answered, known := open[m.ToolCallID]
			if !known {
				return fmt.Errorf("message %d: tool result %q answers no call of assistant message %d", i, m.ToolCallID, openAt)
			}
			if answered {
				return fmt.Errorf("message %d: tool call %q of assistant message %d is answered twice", i, m.ToolCallID, openAt)
			}
			open[m.ToolCallID] = true
			continue
		}
		if err := unanswered(open, openAt); err != nil {
			return err
		}
		open, openAt = nil, -1
		if m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) > 0 {
			open, openAt = map[string]bool{}, i
			for _, tc := range m.ToolCalls {
				if tc.ID == "" {
					return fmt.Errorf("message %d: a tool call of %q has no id", i, tc.Function.Name)
				}
				if _, dup := open[tc.ID]; dup {
					return fmt.Errorf("message %d: tool call id %q is used twice", i, tc.ID)
				}
				open[tc.ID] = false
			}
		}
	}
	return unanswered(open, openAt)
}

func unanswered(open map[string]bool, at int) error {
	ids := make([]string, 0)
	for id, done := range open {
		if !done {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		sort.Strings(ids)
		return fmt.Errorf("message %d: tool calls %v have no result", at, ids)
	}
	return nil
}

// Sanitize returns a copy of msgs that Validate accepts, changing as little as possible: a tool
// result that follows no matching call is left out, and a call that got no result (a turn that
// crashed or was aborted between the two) is removed from its assistant message, which is itself
// left out when nothing else remains of it. System and user messages are always kept.
func Sanitize(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out, _ := SanitizeFrom(msgs)
	return out
}

// SanitizeFrom is Sanitize that also says where each kept message came from: from[i] is the
// index in msgs of out[i], so a caller can carry along what it keeps beside each message.
func SanitizeFrom(msgs []openai.ChatCompletionMessage) (out []openai.ChatCompletionMessage, from []int) {
	out = make([]openai.ChatCompletionMessage, 0, len(msgs))
	from = make([]int, 0, len(msgs))
	for i := 0; i < len(msgs); {
		m := msgs[i]
		if m.Role == openai.ChatMessageRoleTool {
			i++ // an orphan: its call is not right before it
			continue
		}
		if m.Role != openai.ChatMessageRoleAssistant || len(m.ToolCalls) == 0 {
			out = append(out, m)
			from = append(from, i)
			i++
			continue
		}
		called := map[string]bool{}
		for _, tc := range m.ToolCalls {
			if tc.ID != "" {
				if _, dup := called[tc.ID]; dup {
					called[tc.ID] = true // a duplicated id cannot be paired; drop both
				} else {
					called[tc.ID] = false
				}
			}
		}
		answered := map[string]bool{}
		var results []openai.ChatCompletionMessage
		var resultsFrom []int
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == openai.ChatMessageRoleTool; j++ {
			id := msgs[j].ToolCallID
			if dup, ok := called[id]; ok && !dup && !answered[id] {
				answered[id] = true
				results = append(results, msgs[j])
				resultsFrom = append(resultsFrom, j)
			}
		}
		calls := make([]openai.ToolCall, 0, len(m.ToolCalls))
		for _, tc := range m.ToolCalls {
			if answered[tc.ID] {
				calls = append(calls, tc)
			}
		}
		m.ToolCalls = calls
		if len(calls) == 0 {
			m.ToolCalls = nil
		}
		if len(calls) > 0 || m.Content != "" || len(m.MultiContent) > 0 || m.Refusal != "" {
			out = append(out, m)
			out = append(out, results...)
			from = append(from, i)
			from = append(from, resultsFrom...)
		}
		i = j
	}
	return out, from
}

// Fitted is the outcome of fitting a transcript into a budget.
type Fitted struct {
	Messages []openai.ChatCompletionMessage
	// From says where each of Messages came from: From[i] is the index of Messages[i] in the
	// messages given to Fit.
	From []int
	// Tokens is what the messages other than system messages cost, with the opening that restates
	// what was dropped (FitOpening).
	Tokens int
	// DroppedTurns and DroppedMessages count the older turns left out.
	DroppedTurns, DroppedMessages int
	// TruncatedToolOutputs counts tool results of the kept turns shortened for the model.
	TruncatedToolOutputs int
	// Fits is false when even the current turn alone does not fit the budget; the provider may
	// then refuse the request, and the caller should tell the user.
	Fits bool
}

// Trim fits msgs into budget with the Estimator; see Counter.Fit.
func Trim(msgs []openai.ChatCompletionMessage, budget int) []openai.ChatCompletionMessage {
	return Estimator.Fit(msgs, budget).Messages
}

// Trim fits msgs into budget; see Fit.
func (c *Counter) Trim(msgs []openai.ChatCompletionMessage, budget int) []openai.ChatCompletionMessage {
	return c.Fit(msgs, budget).Messages
}

// Fit makes msgs fit budget tokens, counted over every message except system messages (Budget
// has already taken the system prompt off). The result is always a sequence Validate accepts
// (msgs is first Sanitized). A turn is a user message and everything after it up to the next
// user message. Old turns are dropped in large steps (cutting): system messages and the current
// (last) turn are never dropped. If the current turn alone is still over, its tool results are
// shortened with TruncateToolOutput, the longest first, until it fits. msgs is not modified.
func (c *Counter) Fit(msgs []openai.ChatCompletionMessage, budget int) Fitted {
	return c.FitOpening(msgs, budget, nil)
}

// FitOpening is Fit for a conversation whose kept part opens with a restatement of what the
// dropped part told the model: opening(i) is what a request whose conversation starts at msgs[i]
// adds before it, in tokens (nil: nothing). Tokens and Fits include it.
//
// Old turns go in large steps, so that most requests of a long conversation start exactly as the
// one before did and a provider's prefix cache keeps working: the conversation is replayed one
// message at a time, as it grew, and whenever the part kept so far no longer fits, the oldest
// turns are dropped until it takes at most half the budget. Each request thus keeps the cut of
// the request before it until the kept part outgrows the budget again, however many calls that
// takes, and the cut is a function of the messages alone: the same transcript is always cut at
// the same turn.
func (c *Counter) FitOpening(msgs []openai.ChatCompletionMessage, budget int, opening func(i int) int) Fitted {
	msgs, from := SanitizeFrom(msgs)
	if budget < 0 {
		budget = 0
	}
	cost := make([]int, len(msgs))
	turn := make([]int, len(msgs)) // turn number of each non-system message; -1 for system
	var starts []int               // the index of each turn's first message
	sum := make([]int, len(msgs)+1)
	seen := false
	for i, m := range msgs {
		sum[i+1] = sum[i]
		if isSystem(m) {
			turn[i] = -1
			continue
		}
		if !seen || m.Role == openai.ChatMessageRoleUser {
			starts = append(starts, i)
		}
		seen = true
		turn[i] = len(starts) - 1
		cost[i] = c.Message(m)
		sum[i+1] += cost[i]
	}
	lead := func(t int) int {
		if opening == nil || t == 0 {
			return 0 // nothing was dropped: there is nothing to restate
		}
		return opening(from[starts[t]])
	}
	// window is what the kept part costs, from turn t's start through message n.
	window := func(t, n int) int { return sum[n+1] - sum[starts[t]] + lead(t) }

	drop := 0 // turns [0, drop) are dropped
	for n := range msgs {
		if turn[n] < 0 || window(drop, n) <= budget {
			continue
		}
		for drop < turn[n] && window(drop, n) > budget/cutTo {
			drop++
		}
	}

	dropped := 0
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	outFrom := make([]int, 0, len(msgs))
	kept := make([]int, 0, len(msgs)) // cost of each kept message, aligned with out
	total := 0
	for i, m := range msgs {
		if turn[i] >= 0 && turn[i] < drop {
			dropped++
			continue
		}
		out = append(out, m)
		outFrom = append(outFrom, from[i])
		kept = append(kept, cost[i])
		total += cost[i]
	}
	total += lead(drop)
	f := Fitted{Messages: out, From: outFrom, DroppedTurns: drop, DroppedMessages: dropped}
	if total > budget {
		f.TruncatedToolOutputs, total = c.shrinkToolResults(out, kept, total, budget)
	}
	f.Tokens = total
	f.Fits = total <= budget
	return f
}

// cutTo says how far a cut goes: until the kept part takes at most 1/cutTo of the budget. Half
// leaves room for as much conversation again before the next cut.
const cutTo = 2

// shrinkToolResults caps every tool result of msgs at one common size, the largest that makes the
// whole fit: short results stay whole and only the long ones are cut. It edits msgs in place
// (msgs is Fit's own copy) and returns how many results it cut and the new total.
func (c *Counter) shrinkToolResults(msgs []openai.ChatCompletionMessage, cost []int, total, budget int) (int, int) {
	type res struct{ idx, tokens int }
	var tools []res
	sum := 0
	for i, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool && m.Content != "" {
			t := c.Text(m.Content)
			tools = append(tools, res{i, t})
			sum += t
		}
	}
	if len(tools) == 0 {
		return 0, total
	}
	room := budget - (total - sum) // what all tool contents together may take
	if room < 0 {
		room = 0
	}
	capped := func(limit int) int {
		s := 0
		for _, t := range tools {
			s += min(t.tokens, limit)
		}
		return s
	}
	lo, hi := 0, 0
	for _, t := range tools {
		hi = max(hi, t.tokens)
	}
	for lo < hi { // largest limit with capped(limit) <= room
		mid := (lo + hi + 1) / 2
		if capped(mid) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	cut := 0
	for _, t := range tools {
		if t.tokens <= lo {
			continue
		}
		i := t.idx
		msgs[i].Content = c.TruncateToolOutput(msgs[i].Content, lo)
		n := c.Message(msgs[i])
		total += n - cost[i]
		cost[i] = n
		cut++
	}
	return cut, total
}
