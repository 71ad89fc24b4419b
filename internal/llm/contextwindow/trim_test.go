package contextwindow

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

var words = []string{"interface", "GigabitEthernet0/0", "ip", "address", "10.0.0.1", "255.255.255.0",
	"show", "running-config", "ospf", "area", "0", "R1#", "PC1>", "ping", "配置", "路由", "vlan", "\n", "!", "{", "}", `"ok"`}

func randText(r *rand.Rand, maxWords int) string {
	n := r.Intn(maxWords + 1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[r.Intn(len(words))])
		b.WriteByte(' ')
	}
	return b.String()
}

func msg(role, content string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: role, Content: content}
}

// randomTranscript is a valid transcript as the copilot builds it: a system prompt, then turns
// of a user message, rounds of tool calls (parallel ones included, results in any order), and
// usually a final answer. The last turn may stop after tool results, as it does mid-turn.
func randomTranscript(r *rand.Rand) []openai.ChatCompletionMessage {
	msgs := []openai.ChatCompletionMessage{msg("system", "You are a GNS3 assistant. "+randText(r, 50))}
	call := 0
	turns := 1 + r.Intn(8)
	for t := 0; t < turns; t++ {
		msgs = append(msgs, msg("user", fmt.Sprintf("turn %d: %s", t, randText(r, 40))))
		for round := r.Intn(4); round > 0; round-- {
			n := 1 + r.Intn(3)
			a := openai.ChatCompletionMessage{Role: "assistant"}
			if r.Intn(3) == 0 {
				a.Content = randText(r, 20)
			}
			for i := 0; i < n; i++ {
				call++
				a.ToolCalls = append(a.ToolCalls, openai.ToolCall{ID: fmt.Sprintf("call_%d", call), Type: "function",
					Function: openai.FunctionCall{Name: "run_show", Arguments: fmt.Sprintf(`{"command":%q}`, randText(r, 30))}})
			}
			msgs = append(msgs, a)
			for _, i := range r.Perm(n) {
				size := 60
				if r.Intn(4) == 0 {
					size = 800 // a big show output now and then
				}
				msgs = append(msgs, openai.ChatCompletionMessage{Role: "tool", ToolCallID: a.ToolCalls[i].ID, Content: randText(r, size)})
			}
		}
		if t < turns-1 || r.Intn(2) == 0 {
			msgs = append(msgs, msg("assistant", randText(r, 80)))
		}
	}
	return msgs
}

func deepCopy(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		m.ToolCalls = append([]openai.ToolCall(nil), m.ToolCalls...)
		out[i] = m
	}
	return out
}

func nonSystem(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for _, m := range msgs {
		if !isSystem(m) {
			out = append(out, m)
		}
	}
	return out
}

// lastTurn is the last user message and what follows it.
func lastTurn(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	conv := nonSystem(msgs)
	for i := len(conv) - 1; i >= 0; i-- {
		if conv[i].Role == "user" {
			return conv[i:]
		}
	}
	return conv
}

func checkFitted(t *testing.T, seed int64, in []openai.ChatCompletionMessage, budget int, f Fitted) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, budget %d: %s", seed, budget, fmt.Sprintf(format, args...))
	}
	if err := Validate(f.Messages); err != nil {
		fail("invalid sequence: %v", err)
	}
	// Each kept message says where it came from, in order, and is that message (a tool result
	// may be shortened, an assistant message may lose calls left unanswered).
	if len(f.From) != len(f.Messages) {
		fail("%d origins for %d messages", len(f.From), len(f.Messages))
	}
	for i, at := range f.From {
		if at < 0 || at >= len(in) || (i > 0 && at <= f.From[i-1]) {
			fail("origin %d of message %d out of order", at, i)
		}
		got, orig := f.Messages[i], in[at]
		if got.Role != orig.Role || got.ToolCallID != orig.ToolCallID || (got.Role != "tool" && got.Content != orig.Content) {
			fail("message %d does not come from message %d", i, at)
		}
	}
	var sysIn, sysOut []openai.ChatCompletionMessage
	for _, m := range in {
		if isSystem(m) {
			sysIn = append(sysIn, m)
		}
	}
	for _, m := range f.Messages {
		if isSystem(m) {
			sysOut = append(sysOut, m)
		}
	}
	if !reflect.DeepEqual(sysIn, sysOut) {
		fail("system messages changed")
	}
	wantUser := lastTurn(in)[0]
	gotUser := lastTurn(f.Messages)[0]
	if wantUser.Role == "user" && !reflect.DeepEqual(wantUser, gotUser) {
		fail("current user message dropped: got %q", gotUser.Content)
	}
	if got := Estimator.Messages(nonSystem(f.Messages)); got != f.Tokens {
		fail("Tokens %d but messages cost %d", f.Tokens, got)
	}
	if f.Fits != (f.Tokens <= budget) {
		fail("Fits %v with %d tokens", f.Fits, f.Tokens)
	}
	// The current turn can always be brought down to its messages with empty tool results.
	floor := 0
	for _, m := range lastTurn(Sanitize(in)) {
		if m.Role == "tool" {
			m.Content = ""
		}
		floor += Estimator.Message(m)
	}
	if budget >= floor && !f.Fits {
		fail("does not fit although the current turn can (%d ≤ %d)", floor, budget)
	}
	// The kept conversation is a suffix of whole turns; only the current turn's tool results
	// may be shortened, and only when no older turn is left.
	san := nonSystem(Sanitize(in))
	out := nonSystem(f.Messages)
	if len(out) > len(san) {
		fail("more messages out than in")
	}
	suffix := san[len(san)-len(out):]
	if len(out) > 0 && out[0].Role != "user" && len(out) != len(san) {
		fail("kept conversation starts inside a turn with a %s message", out[0].Role)
	}
	for i := range out {
		if out[i].Role == "tool" && f.TruncatedToolOutputs > 0 {
			if out[i].ToolCallID != suffix[i].ToolCallID {
				fail("tool result %d replaced", i)
			}
			continue
		}
		if !reflect.DeepEqual(out[i], suffix[i]) {
			fail("message %d changed", i)
		}
	}
	if f.TruncatedToolOutputs > 0 && len(out) != len(lastTurn(in)) {
		fail("tool results cut while older turns were kept")
	}
	// Nothing is dropped from a conversation that fits whole.
	if f.DroppedTurns > 0 && Estimator.Messages(san) <= budget {
		fail("dropped %d turns of a conversation that fits", f.DroppedTurns)
	}
}

func TestTrimPropertyValidAndWithinBudget(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		in := randomTranscript(r)
		orig := deepCopy(in)
		full := Estimator.Messages(nonSystem(in))
		budget := r.Intn(full + full/4 + 1)
		f := Estimator.Fit(in, budget)
		if !reflect.DeepEqual(in, orig) {
			t.Fatalf("seed %d: Fit modified its input", seed)
		}
		checkFitted(t, seed, in, budget, f)
		if seed%5 == 0 {
			checkSteps(t, seed, in, budget) // a Fit per request of the transcript: a sample is enough
		}
		if budget >= full && (f.DroppedMessages != 0 || f.TruncatedToolOutputs != 0) {
			t.Fatalf("seed %d: trimmed a transcript that fits", seed)
		}
		if got := Trim(in, budget); !reflect.DeepEqual(got, f.Messages) {
			t.Fatalf("seed %d: Trim and Fit disagree", seed)
		}
	}
}

// checkSteps replays in as it grew, one message at a time, and checks that it is cut in large
// steps that keep the requests' prefix: the cut never moves back; while it stays, each request
// starts with the whole of the request before it (unless the current turn had to be shortened);
// and when it moves, the kept part takes at most half the budget (plus what arrived since the
// request before, after the cut), unless only the current turn is left.
func checkSteps(t *testing.T, seed int64, in []openai.ChatCompletionMessage, budget int) {
	t.Helper()
	var prev Fitted
	prevN := 0
	for n := 2; n <= len(in); n++ {
		// A request follows the user's message or the last result of a step, never a call whose
		// results are still to come.
		last := in[n-1].Role
		if last != "user" && (last != "tool" || n < len(in) && in[n].Role == "tool") {
			continue
		}
		f := Estimator.Fit(in[:n], budget)
		if n > 2 {
			switch {
			case f.DroppedTurns < prev.DroppedTurns:
				t.Fatalf("seed %d, budget %d, %d messages: the cut moved back from %d to %d turns", seed, budget, n, prev.DroppedTurns, f.DroppedTurns)
			case f.DroppedTurns == prev.DroppedTurns && f.TruncatedToolOutputs == 0 && prev.TruncatedToolOutputs == 0:
				if len(f.Messages) < len(prev.Messages) || !reflect.DeepEqual(f.Messages[:len(prev.Messages)], prev.Messages) {
					t.Fatalf("seed %d, budget %d, %d messages: the request does not extend the one before", seed, budget, n)
				}
			case f.DroppedTurns > prev.DroppedTurns && keptTurnsBefore(f, prevN) > 1 &&
				f.Tokens > budget/2+Estimator.Messages(nonSystem(in[prevN:n])):
				t.Fatalf("seed %d, budget %d, %d messages: a cut kept %d tokens, more than half", seed, budget, n, f.Tokens)
			}
		}
		prev, prevN = f, n
	}
}

// keptTurnsBefore counts the turns f keeps messages of from before message n.
func keptTurnsBefore(f Fitted, n int) int {
	turns := 0
	for i, m := range f.Messages {
		if f.From[i] < n && m.Role == "user" {
			turns++
		}
	}
	return turns
}

// A long conversation keeps its prefix for most of its requests: of 40 turns of four calls in a
// window that holds about eight of them, fewer than one request in ten starts differently from the
// one before.
func TestFitKeepsThePrefixOfALongConversation(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	msgs := []openai.ChatCompletionMessage{msg("system", "prompt")}
	call := 0
	var requests [][]openai.ChatCompletionMessage
	budget := 0
	for turn := 0; turn < 40; turn++ {
		msgs = append(msgs, msg("user", fmt.Sprintf("turn %d: %s", turn, randText(r, 20))))
		for step := 0; step < 3; step++ {
			requests = append(requests, append([]openai.ChatCompletionMessage(nil), msgs...))
			call++
			id := fmt.Sprintf("call_%d", call)
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function",
				Function: openai.FunctionCall{Name: "run_show", Arguments: `{"command":"show ip route"}`}}}},
				openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: randText(r, 120)})
		}
		requests = append(requests, append([]openai.ChatCompletionMessage(nil), msgs...))
		msgs = append(msgs, msg("assistant", randText(r, 40)))
		if turn == 7 {
			budget = Estimator.Messages(nonSystem(msgs))
		}
	}
	broken := 0
	var prev []openai.ChatCompletionMessage
	for i, req := range requests {
		got := Estimator.Fit(req, budget).Messages
		if i > 0 && (len(got) < len(prev) || !reflect.DeepEqual(got[:len(prev)], prev)) {
			broken++
		}
		prev = got
	}
	if broken == 0 || broken*10 >= len(requests) {
		t.Fatalf("%d of %d requests do not extend the one before", broken, len(requests))
	}
	t.Logf("%d of %d requests start differently from the one before", broken, len(requests))
}

// A transcript broken by a crash or an abort (a call without a result, a result without its
// call, results out of place) still comes out valid.
func TestTrimPropertyRepairsBrokenTranscripts(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		in := randomTranscript(r)
		for k := r.Intn(4); k > 0 && len(in) > 2; k-- {
			i := 1 + r.Intn(len(in)-1)
			switch r.Intn(3) {
			case 0: // lose a message (never a user message: those are what a person typed)
				if in[i].Role != "user" {
					in = append(in[:i:i], in[i+1:]...)
				}
			case 1: // a result moved somewhere else
				j := 1 + r.Intn(len(in)-1)
				in[i], in[j] = in[j], in[i]
			case 2: // a duplicated result
				if in[i].Role == "tool" {
					in = append(in[:i+1:i+1], in[i:]...)
				}
			}
		}
		full := Estimator.Messages(nonSystem(in))
		budget := r.Intn(full + 1)
		f := Estimator.Fit(in, budget)
		if err := Validate(f.Messages); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		users := func(ms []openai.ChatCompletionMessage) int {
			n := 0
			for _, m := range ms {
				if m.Role == "user" {
					n++
				}
			}
			return n
		}
		if users(Sanitize(in)) != users(in) {
			t.Fatalf("seed %d: Sanitize dropped a user message", seed)
		}
		if f.Fits != (f.Tokens <= budget) {
			t.Fatalf("seed %d: Fits %v with %d tokens for %d", seed, f.Fits, f.Tokens, budget)
		}
	}
}

func TestTrimDropsWholeTurnsNeverOrphaningToolResults(t *testing.T) {
	call := func(id string) openai.ToolCall {
		return openai.ToolCall{ID: id, Type: "function", Function: openai.FunctionCall{Name: "get_topology", Arguments: "{}"}}
	}
	big := strings.Repeat("PC1 10.0.0.1/24 gateway 10.0.0.254\n", 200)
	in := []openai.ChatCompletionMessage{
		msg("system", "prompt"),
		msg("user", "old question"),
		{Role: "assistant", ToolCalls: []openai.ToolCall{call("a"), call("b")}},
		{Role: "tool", ToolCallID: "b", Content: big},
		{Role: "tool", ToolCallID: "a", Content: big},
		msg("assistant", "old answer"),
		msg("user", "new question"),
	}
	current := Estimator.Messages(in[6:])
	// Enough for the current turn and the old answer, not for the old tool results: a
	// message-by-message trimmer would keep "old answer" and the second result, orphaned.
	budget := current + Estimator.Message(in[5]) + Estimator.Message(in[4])
	got := Trim(in, budget)
	want := []openai.ChatCompletionMessage{in[0], in[6]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %d messages: %+v", len(got), got)
	}
	if Validate(Trim(in, 0)) != nil || len(Trim(in, 0)) != 2 {
		t.Fatal("budget 0 keeps the system prompt and the current user message")
	}
	if got := Trim(in, 1<<30); !reflect.DeepEqual(got, in) {
		t.Fatal("a transcript that fits is returned unchanged")
	}
}

func TestFitShortensCurrentTurnToolResults(t *testing.T) {
	out := strings.Repeat("interface GigabitEthernet0/1\n ip address 10.1.1.1 255.255.255.0\n!\n", 400)
	in := []openai.ChatCompletionMessage{
		msg("system", "prompt"),
		msg("user", "show me the running config of R1 and R2"),
		{Role: "assistant", ToolCalls: []openai.ToolCall{
			{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "run_show", Arguments: `{"node":"R1"}`}},
			{ID: "c2", Type: "function", Function: openai.FunctionCall{Name: "run_show", Arguments: `{"node":"R2"}`}}}},
		{Role: "tool", ToolCallID: "c1", Content: out},
		{Role: "tool", ToolCallID: "c2", Content: "short"},
	}
	f := Estimator.Fit(in, 2000)
	if !f.Fits || f.TruncatedToolOutputs != 1 || f.Tokens > 2000 {
		t.Fatalf("fits=%v truncated=%d tokens=%d", f.Fits, f.TruncatedToolOutputs, f.Tokens)
	}
	if f.Messages[4].Content != "short" || !strings.Contains(f.Messages[3].Content, "were cut here") {
		t.Fatal("only the long result is cut, with a note")
	}
	if in[3].Content != out {
		t.Fatal("the caller's transcript keeps the full output")
	}
}

func TestValidate(t *testing.T) {
	a := openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "x", Type: "function"}}}
	res := openai.ChatCompletionMessage{Role: "tool", ToolCallID: "x"}
	cases := []struct {
		name string
		msgs []openai.ChatCompletionMessage
		ok   bool
	}{
		{"pair", []openai.ChatCompletionMessage{msg("user", "q"), a, res, msg("assistant", "a")}, true},
		{"orphan result", []openai.ChatCompletionMessage{msg("user", "q"), res}, false},
		{"unanswered call", []openai.ChatCompletionMessage{msg("user", "q"), a, msg("user", "again")}, false},
		{"unanswered at end", []openai.ChatCompletionMessage{msg("user", "q"), a}, false},
		{"answered twice", []openai.ChatCompletionMessage{a, res, res}, false},
		{"wrong id", []openai.ChatCompletionMessage{a, {Role: "tool", ToolCallID: "y"}}, false},
		{"result after text", []openai.ChatCompletionMessage{a, res, msg("assistant", "a"), res}, false},
		{"call without id", []openai.ChatCompletionMessage{{Role: "assistant", ToolCalls: []openai.ToolCall{{Type: "function"}}}}, false},
	}
	for _, tc := range cases {
		if err := Validate(tc.msgs); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v", tc.name, err)
		}
		if err := Validate(Sanitize(tc.msgs)); err != nil {
			t.Errorf("%s: Sanitize leaves %v", tc.name, err)
		}
	}
	partial := Sanitize([]openai.ChatCompletionMessage{msg("user", "q"),
		{Role: "assistant", Content: "checking", ToolCalls: []openai.ToolCall{{ID: "x", Type: "function"}, {ID: "y", Type: "function"}}},
		{Role: "tool", ToolCallID: "y", Content: "done"}})
	if len(partial) != 3 || len(partial[1].ToolCalls) != 1 || partial[1].ToolCalls[0].ID != "y" {
		t.Fatalf("unanswered call not removed: %+v", partial)
	}
}

func TestTruncateToolOutput(t *testing.T) {
	lines := make([]string, 0, 600)
	for i := 0; i < 600; i++ {
		lines = append(lines, fmt.Sprintf("line %03d: GigabitEthernet0/%d is up, line protocol is up", i, i%4))
	}
	s := strings.Join(lines, "\n")
	if TruncateToolOutput(s, Text(s)) != s {
		t.Fatal("an output that fits is unchanged")
	}
	for _, c := range []*Counter{Estimator, ForModel("gpt-4o")} {
		got := c.TruncateToolOutput(s, 500)
		if n := c.Text(got); n > 500 {
			t.Fatalf("%s: %d tokens > 500", c.Encoding(), n)
		}
		if !strings.HasPrefix(got, "line 000:") || !strings.HasSuffix(got, lines[599]) {
			t.Fatalf("head and tail kept: %q … %q", got[:20], got[len(got)-40:])
		}
		if !strings.Contains(got, "were cut here") || !strings.Contains(got, fmt.Sprintf("of %d tokens", c.Text(s))) {
			t.Fatal("note says how much was cut")
		}
		head := got[:strings.Index(got, "\n\n[…")]
		if !strings.HasSuffix(head, "is up") && !strings.HasSuffix(head, "\n") {
			t.Fatalf("head cut mid-line: %q", head[len(head)-30:])
		}
	}
	if got := TruncateToolOutput(s, 30); got == "" || Text(got) > 30 || !strings.Contains(got, "omitted") {
		t.Fatalf("tiny budget: %q", got)
	}
	if TruncateToolOutput(s, 3) != "" || TruncateToolOutput(s, 0) != "" || TruncateToolOutput(s, -1) != "" {
		t.Fatal("no room, no text")
	}
}

func TestTruncatePropertyNeverOverAndValidUTF8(t *testing.T) {
	for seed := int64(1); seed <= 150; seed++ {
		r := rand.New(rand.NewSource(seed))
		s := randText(r, 2000)
		max := r.Intn(Text(s) + 50)
		for _, c := range []*Counter{Estimator, ForModel("gpt-4o")} {
			got := c.TruncateToolOutput(s, max)
			if n := c.Text(got); n > max {
				t.Fatalf("seed %d %s: %d tokens > %d", seed, c.Encoding(), n, max)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("seed %d: split a character", seed)
			}
			if c.Text(s) <= max && got != s {
				t.Fatalf("seed %d: changed an output that fits", seed)
			}
		}
	}
}

func BenchmarkFitLongSession(b *testing.B) {
	r := rand.New(rand.NewSource(7))
	var in []openai.ChatCompletionMessage
	for len(in) < 400 {
		in = append(in, randomTranscript(r)[1:]...)
	}
	in = append([]openai.ChatCompletionMessage{msg("system", "prompt")}, Sanitize(in)...)
	budget := Estimator.Messages(in) / 3
	Estimator.Fit(in, budget)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Estimator.Fit(in, budget)
	}
}

func TestCapToolOutputs(t *testing.T) {
	long := strings.Repeat("R1#show version\nCisco IOS Software, Version 15.9\n", 200)
	in := []openai.ChatCompletionMessage{
		msg("user", long), // only tool results are capped
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "a", Type: "function"}, {ID: "b", Type: "function"}}},
		{Role: "tool", ToolCallID: "a", Content: long},
		{Role: "tool", ToolCallID: "b", Content: "short"},
	}
	orig := deepCopy(in)
	out, cut := Estimator.CapToolOutputs(in, 300)
	if cut != 1 || Text(out[2].Content) > 300 || out[3].Content != "short" || out[0].Content != long {
		t.Fatalf("cut %d: %d tokens", cut, Text(out[2].Content))
	}
	if !reflect.DeepEqual(in, orig) {
		t.Fatal("input modified")
	}
	same, cut := Estimator.CapToolOutputs(in, 1<<20)
	if cut != 0 || &same[0] != &in[0] {
		t.Fatal("nothing to cut: the same slice comes back")
	}
}
