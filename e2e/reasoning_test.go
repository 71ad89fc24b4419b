package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// thinker is a thought the scripted model has, never to be seen in an answer.
const thinker = "Thinking privately about"

// useConfig saves a configuration for the user's provider at baseURL and makes it her default,
// so her next turns go there.
func useConfig(t testing.TB, env *e2eenv.Env, userID, provider, model, baseURL string) string {
	t.Helper()
	base := "/v3/access/users/" + userID + "/llm-model-configs"
	code, body := env.Do(http.MethodPost, base, map[string]any{"name": provider + " " + model, "provider": provider,
		"base_url": baseURL, "model": model, "api_key": "sk-" + provider + "-key", "context_limit": 128, "is_default": false})
	require.Equal(t, http.StatusCreated, code, string(body))
	var created struct {
		ConfigID string `json:"config_id"`
	}
	require.NoError(t, json.Unmarshal(body, &created))
	code, body = env.Do(http.MethodPut, base+"/default/"+created.ConfigID, nil)
	require.Equal(t, http.StatusOK, code, string(body))
	return created.ConfigID
}

// thinkingTurn scripts a turn of a thinking model: two calls at once, then one more, then the
// answer, each step with its reasoning.
func thinkingTurn(p *fakeopenai.Server, projectID, answer string) {
	topo := func(id string) fakeopenai.ToolCall {
		return fakeopenai.ToolCall{ID: id, Name: "get_gns3_topology", Arguments: `{"project_id":"` + projectID + `"}`}
	}
	p.Enqueue(
		fakeopenai.Reply{Reasoning: []string{thinker + " ", "which tools to call."}, ToolCalls: []fakeopenai.ToolCall{topo(""), topo("")}},
		fakeopenai.Reply{Reasoning: []string{thinker + " the topology."}, ToolCalls: []fakeopenai.ToolCall{topo("")}},
		fakeopenai.Reply{Reasoning: []string{thinker + " the answer."}, Content: fakeopenai.Words(answer)},
	)
}

// thinkingTitle answers the title call (the one not streamed) as a thinking model: a thought,
// then the title.
func thinkingTitle(title string) fakeopenai.Handler {
	return func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Reply{Reasoning: []string{thinker + " a short title."}, Content: []string{title}}, true
		}
		return fakeopenai.Reply{}, false
	}
}

// sessionTitle is the session's title as the session list says it.
func sessionTitle(t *testing.T, env *e2eenv.Env, sessionID string) string {
	t.Helper()
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var list []struct {
		ThreadID string `json:"thread_id"`
		Title    string `json:"title"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	for _, s := range list {
		if s.ThreadID == sessionID {
			return s.Title
		}
	}
	t.Fatalf("session %s is not listed", sessionID)
	return ""
}

// chatTurn sends a message in a session ("" for a new one) and reads the stream to its end.
func chatTurn(t *testing.T, env *e2eenv.Env, sessionID, message string) (string, []e2eenv.Frame) {
	t.Helper()
	body := map[string]any{"message": message}
	if sessionID != "" {
		body["session_id"] = sessionID
	}
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), body, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], "turn %v: %v", e2eenv.Types(frames), frames[len(frames)-1].Data)
	sid, _ := startedIDs(t, frames)
	return sid, frames
}

// toolsRun counts the tools the turn ran.
func toolsRun(frames []e2eenv.Frame) int {
	n := 0
	for _, f := range frames {
		if f.Event == "tool_end" {
			n++
		}
	}
	return n
}

// requireNoThoughts fails when a reasoning of the scripted model shows as the answer a client
// reads: in a stream frame other than reasoning's own, or in a history message's content.
func requireNoThoughts(t *testing.T, env *e2eenv.Env, sessionID string, frames []e2eenv.Frame) {
	t.Helper()
	for _, f := range frames {
		if f.Event != "reasoning" {
			require.NotContains(t, f.Raw, thinker, "a %s frame carries the reasoning", f.Event)
		}
	}
	for _, m := range history(t, env, sessionID) {
		require.NotContains(t, m.Content, thinker, "the history shows the reasoning as the answer")
	}
}

// historyMessage is a message of a session's history, as the chat API answers it.
type historyMessage struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	Reasoning string `json:"reasoning"`
}

func history(t *testing.T, env *e2eenv.Env, sessionID string) []historyMessage {
	t.Helper()
	code, body := env.Do(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/history"), nil)
	require.Equal(t, http.StatusOK, code, string(body))
	var h struct {
		Messages []historyMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &h))
	return h.Messages
}

// reasoningOf is the reasoning a client that shows it reads: the turn's reasoning events joined.
func reasoningOf(frames []e2eenv.Frame) string {
	var b strings.Builder
	for _, f := range frames {
		if f.Event == "reasoning" {
			b.WriteString(f.Data["reasoning"].(string))
		}
	}
	return b.String()
}

// Through the whole copilot and each provider's emulator: a streamed turn with parallel and
// sequential tool calls, then a later turn of the same session, both complete; what each
// provider needs back reaches it, and no reasoning reaches the answer a client reads.
func TestThinkingModelsCompleteToolTurnsThroughTheChatAPI(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	userID := myUserID(t, env)
	for _, tp := range fakeopenai.Thinkers {
		t.Run(tp.Name, func(t *testing.T) {
			p := fakeopenai.New(t)
			p.Emulate(tp.Emulate)
			p.SetHandler(thinkingTitle("Thinking lab"))
			useConfig(t, env, userID, tp.Provider, tp.Model, p.URL)

			thinkingTurn(p, env.ProjectID, "Your lab has no nodes yet.")
			sessionID, first := chatTurn(t, env, "", "What is in my lab?")
			require.Equal(t, "Your lab has no nodes yet.", contentOf(first))
			require.Equal(t, 3, toolsRun(first), "two calls at once, then one: %v", e2eenv.Types(first))
			// The title, asked for without streaming, is the answer alone, never the thought.
			require.Equal(t, "Thinking lab", sessionTitle(t, env, sessionID))
			require.Len(t, p.Requests(), 4, "three streamed calls and the title's")

			thinkingTurn(p, env.ProjectID, "Still no nodes.")
			_, later := chatTurn(t, env, sessionID, "And now?")
			require.Equal(t, "Still no nodes.", contentOf(later))

			require.Zero(t, p.Stats().Rejected, "the provider refused a request")
			requireNoThoughts(t, env, sessionID, append(first, later...))
			// The reasoning streams as reasoning, and the history keeps it beside each answer (Google's
			// endpoint sends no thoughts, only their signatures).
			if tp.Emulate != fakeopenai.Gemini3 {
				for _, thought := range []string{" which tools to call.", " the topology.", " the answer."} {
					require.Contains(t, reasoningOf(first), thinker+thought)
				}
				var kept []string
				for _, m := range history(t, env, sessionID) {
					if m.Role == "assistant" && m.Reasoning != "" {
						kept = append(kept, m.Reasoning)
					}
				}
				require.Equal(t, []string{thinker + " which tools to call.", thinker + " the topology.", thinker + " the answer.",
					thinker + " which tools to call.", thinker + " the topology.", thinker + " the answer."}, kept)
			}
			streamed := streamedRequests(p)
			require.Len(t, streamed, 6)
			last := streamed[5]
			switch tp.Emulate {
			case fakeopenai.DeepSeekThinking:
				// The later turn sends the first turn's reasoning back, stored, not remembered.
				var sent []string
				for _, m := range last.Messages {
					if text, ok := m.ReasoningText(); ok && m.Role == "assistant" {
						sent = append(sent, text)
					}
				}
				require.Contains(t, sent, thinker+" which tools to call.")
			case fakeopenai.LlamaCppThink, fakeopenai.LlamaCppThinkOpenInPrompt:
				require.NotContains(t, string(last.Raw), thinker, "past reasoning goes back to no template that drops it")
			}
		})
	}
}

// A session that changes its model configuration between turns keeps working: each provider
// gets back only what it produced itself, and opaque state (Gemini's signatures, OpenRouter's
// signed and encrypted details) never goes to another.
func TestThinkingSessionSurvivesAModelSwitch(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	userID := myUserID(t, env)
	gemini, deepseek, openrouter := fakeopenai.New(t), fakeopenai.New(t), fakeopenai.New(t)
	gemini.Emulate(fakeopenai.Gemini3)
	deepseek.Emulate(fakeopenai.DeepSeekThinking)
	openrouter.Emulate(fakeopenai.OpenRouterSigned)
	for _, p := range []*fakeopenai.Server{gemini, deepseek, openrouter} {
		p.SetHandler(titleReplies("Switching models"))
	}

	useConfig(t, env, userID, "google", "gemini-3-pro-preview", gemini.URL)
	thinkingTurn(gemini, env.ProjectID, "Gemini says: no nodes.")
	sessionID, frames := chatTurn(t, env, "", "What is in my lab?")
	require.Equal(t, "Gemini says: no nodes.", contentOf(frames))
	var signatures []string
	for _, m := range streamedRequests(gemini)[2].Messages {
		for _, c := range m.ToolCalls {
			if sig := c.ThoughtSignature(); sig != "" {
				signatures = append(signatures, sig)
			}
		}
	}
	require.Len(t, signatures, 2, "the first of the parallel calls and the next step's call went back signed")

	useConfig(t, env, userID, "deepseek", "deepseek-v4-pro", deepseek.URL)
	thinkingTurn(deepseek, env.ProjectID, "DeepSeek says: still none.")
	_, frames2 := chatTurn(t, env, sessionID, "Look again.")
	require.Equal(t, "DeepSeek says: still none.", contentOf(frames2))

	useConfig(t, env, userID, "openrouter", "anthropic/claude-sonnet-4.5", openrouter.URL)
	thinkingTurn(openrouter, env.ProjectID, "Claude says: none at all.")
	_, frames3 := chatTurn(t, env, sessionID, "One more time.")
	require.Equal(t, "Claude says: none at all.", contentOf(frames3))

	useConfig(t, env, userID, "google", "gemini-3-pro-preview", gemini.URL)
	thinkingTurn(gemini, env.ProjectID, "Gemini again: empty.")
	_, frames4 := chatTurn(t, env, sessionID, "Last look.")
	require.Equal(t, "Gemini again: empty.", contentOf(frames4))

	for _, p := range []*fakeopenai.Server{gemini, deepseek, openrouter} {
		require.Zero(t, p.Stats().Rejected, "%s refused a request", p.Emulating())
	}
	for _, r := range append(streamedRequests(deepseek), streamedRequests(openrouter)...) {
		for _, sig := range signatures {
			require.NotContains(t, string(r.Raw), sig, "Gemini's signature went to another provider")
		}
	}
	for _, r := range streamedRequests(deepseek) {
		require.NotContains(t, string(r.Raw), "reasoning_details")
	}
	for _, r := range append(streamedRequests(gemini)[3:], streamedRequests(deepseek)...) {
		require.NotContains(t, string(r.Raw), "reasoning.encrypted", "OpenRouter's encrypted details went elsewhere")
	}
	// Gemini, back again, gets its own first turn's signatures back.
	last := streamedRequests(gemini)
	require.Contains(t, string(last[len(last)-1].Raw), signatures[0])
	requireNoThoughts(t, env, sessionID, append(append(append(frames, frames2...), frames3...), frames4...))
}

// A worker killed between two model calls of a thinking turn loses nothing the provider needs:
// the worker that takes the turn over builds the next request from the stored transcript, and
// DeepSeek, which refuses a request without the first call's reasoning_content, accepts it.
func TestThinkingTurnSurvivesAWorkerKilledBetweenTwoCalls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	env, temporalAddr := startAPIWithoutWorkers(t, ctx, e2eenv.Options{})
	bin := buildBinary(t)
	env.LLM.Emulate(fakeopenai.DeepSeekThinking)
	env.LLM.SetHandler(titleReplies("Crash while thinking"))
	topo := fakeopenai.ToolCall{Name: "get_gns3_topology", Arguments: `{"project_id":"` + env.ProjectID + `"}`}
	env.LLM.Enqueue(
		fakeopenai.Reply{Reasoning: []string{thinker + " where to start."}, ToolCalls: []fakeopenai.ToolCall{topo, topo}},
		// The second call thinks, then hangs: the worker dies under it.
		fakeopenai.Reply{Reasoning: []string{thinker + " the result, slowly"}, Hang: true, HangAfter: 1},
		fakeopenai.Reply{Reasoning: []string{thinker + " the result again."}, ToolCalls: []fakeopenai.ToolCall{topo}},
		fakeopenai.Reply{Reasoning: []string{thinker + " the answer."}, Content: fakeopenai.Words("Recovered: no nodes yet.")},
	)
	flags := []string{"--llm-provider", "deepseek", "--llm-model", "deepseek-v4-pro"}
	logPath := workerLog(t, env.Config.DataDir)
	w1 := startWorker(t, bin, env, temporalAddr, logPath, flags...)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "survive this"}, "")
	seen := s.Until(t, func(f e2eenv.Frame) bool { return f.Event == "tool_end" })
	require.NoError(t, env.LLM.WaitHanging(ctx, 1))
	sessionID, _ := startedIDs(t, seen)
	s.Close()
	require.NoError(t, w1.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-w1.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not die")
	}
	startWorker(t, bin, env, temporalAddr, logPath, flags...)

	rejoin := env.OpenStream(http.MethodGet, env.ChatPath("/sessions/"+sessionID+"/stream"), nil, seen[len(seen)-1].ID)
	go func() { <-ctx.Done(); rejoin.Close() }() // a stuck turn fails the test instead of hanging it
	rest := rejoin.UntilDone(t, true)
	done := rest[len(rest)-1]
	require.Equal(t, "completed", done.Data["status"], "%v: %v", e2eenv.Types(rest), done.Data)
	require.Zero(t, env.LLM.Stats().Rejected, "DeepSeek refused the request of the worker that took over")

	// The retried call, made by the new worker, sent the first call's reasoning back.
	streamed := streamedRequests(env.LLM)
	require.Len(t, streamed, 4)
	var sent []string
	for _, m := range streamed[2].Messages {
		if text, ok := m.ReasoningText(); ok {
			sent = append(sent, text)
		}
	}
	require.Equal(t, []string{thinker + " where to start."}, sent)
	require.Contains(t, contentOf(rest), "Recovered: no nodes yet.")
	requireNoThoughts(t, env, sessionID, rest)
}

// eventTime is when the event log took a frame, from its id ("1700000000000-0").
func eventTime(t *testing.T, f e2eenv.Frame) time.Time {
	t.Helper()
	ms, _, ok := strings.Cut(f.ID, "-")
	require.True(t, ok, "frame id %q", f.ID)
	n, err := strconv.ParseInt(ms, 10, 64)
	require.NoError(t, err)
	return time.UnixMilli(n)
}

// A model that thinks for longer than every watchdog between it and the client is never cut
// off, as its reasoning streams all along: the stream's idle timeout (scaled down here to
// 600 ms), the SSE heartbeat interval (200 ms) and the workflow task timeout that a model call
// run as a local activity outlives (5 s) are all shorter than the 7 s it reasons before its first
// tool call. A provider that falls silent for longer than the idle timeout is taken for stalled
// and retried; the client is told to drop what that attempt had streamed.
func TestLongThinkingIsNeverCutOff(t *testing.T) {
	const idle = 600 * time.Millisecond
	env := e2eenv.Start(t, e2eenv.Options{Heartbeat: 200 * time.Millisecond, Configure: func(c *app.Config) {
		c.LLMProvider, c.LLMModel, c.LLMIdleTimeout = "deepseek", "deepseek-v4-pro", idle
	}})
	env.LLM.Emulate(fakeopenai.DeepSeekThinking)
	env.LLM.SetHandler(titleReplies("Long thoughts"))
	thoughts := make([]string, 35)
	for i := range thoughts {
		thoughts[i] = fmt.Sprintf("%s step %d. ", thinker, i)
	}
	topo := fakeopenai.ToolCall{Name: "get_gns3_topology", Arguments: `{"project_id":"` + env.ProjectID + `"}`}
	env.LLM.Enqueue(
		fakeopenai.Reply{Reasoning: thoughts, ChunkDelay: 200 * time.Millisecond, ToolCalls: []fakeopenai.ToolCall{topo}},
		fakeopenai.Reply{Reasoning: []string{thinker + " the answer."}, Content: fakeopenai.Words("Thought it through: no nodes.")},
	)
	sessionID, frames := chatTurn(t, env, "", "Think hard about my lab.")
	require.Equal(t, "Thought it through: no nodes.", contentOf(frames))
	require.Equal(t, 1, toolsRun(frames))
	var reasoning []e2eenv.Frame
	for _, f := range frames {
		require.NotEqual(t, "retry", f.Event, "the call was cut off and retried: %v", e2eenv.Types(frames))
		require.NotEqual(t, "error", f.Event)
		if f.Event == "reasoning" {
			reasoning = append(reasoning, f)
		}
	}
	require.Greater(t, eventTime(t, reasoning[len(reasoning)-1]).Sub(eventTime(t, reasoning[0])), 5*time.Second,
		"the reasoning streamed for longer than every watchdog")
	require.Greater(t, len(reasoning), 10, "it streamed as it came, not at the end")
	require.Contains(t, reasoningOf(frames), thinker+" step 34.")
	require.Len(t, streamedRequests(env.LLM), 2, "each model call made once")
	requireNoThoughts(t, env, sessionID, frames)

	// A provider silent for longer than the idle timeout: stalled, and the call is made again.
	env.LLM.Enqueue(
		fakeopenai.Reply{Reasoning: []string{thinker + " before the silence. ", "never sent"}, Hang: true, HangAfter: 1},
		fakeopenai.Reply{Reasoning: []string{thinker + " again."}, Content: fakeopenai.Words("Back: still no nodes.")},
	)
	_, frames = chatTurn(t, env, sessionID, "And now?")
	require.Equal(t, "Back: still no nodes.", contentOf(frames))
	require.Contains(t, e2eenv.Types(frames), "retry", "the client was told to drop the stalled attempt's reasoning")
	require.Len(t, streamedRequests(env.LLM), 4)
}

// A configuration's reasoning effort reaches the provider in its own words on every call of a
// turn, and the session's title is asked for without thinking; with thinking off, the model
// streams none. A value the copilot does not know is refused with the allowed ones.
func TestThinkingControlsReachTheProvider(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{})
	userID := myUserID(t, env)
	p := fakeopenai.New(t)
	p.Emulate(fakeopenai.DeepSeekThinking)
	p.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Reply{Reasoning: []string{thinker + " a title."}, Content: []string{"Effort check"}}, true
		}
		return fakeopenai.Reply{}, false
	})
	id := useConfig(t, env, userID, "deepseek", "deepseek-flash", p.URL)
	base := "/v3/access/users/" + userID + "/llm-model-configs/" + id

	code, body := env.Do(http.MethodPut, base, map[string]any{"reasoning_effort": "extreme"})
	require.Equal(t, http.StatusUnprocessableEntity, code)
	require.Contains(t, string(body), "is not one of off, low, medium, high, max")
	code, body = env.Do(http.MethodPut, base, map[string]any{"reasoning_effort": "max"})
	require.Equal(t, http.StatusOK, code, string(body))

	thinkingTurn(p, env.ProjectID, "No nodes, thought through.")
	sessionID, frames := chatTurn(t, env, "", "What is in my lab?")
	require.Equal(t, "No nodes, thought through.", contentOf(frames))
	require.NotEmpty(t, reasoningOf(frames))
	for _, r := range streamedRequests(p) {
		require.Equal(t, "enabled", r.ThinkingType())
		require.Equal(t, "max", r.ReasoningEffort)
	}
	var title fakeopenai.Request
	for _, r := range p.Requests() {
		if !r.Stream {
			title = r
		}
	}
	require.Equal(t, "disabled", title.ThinkingType(), "the title is asked for without thinking")
	require.Equal(t, 24, *title.MaxTokens, "a title without thinking needs no room for it")
	code, body = env.Do(http.MethodGet, env.ChatPath("/sessions"), nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), `"title":"Effort check"`)

	code, body = env.Do(http.MethodPut, base, map[string]any{"reasoning_effort": "off"})
	require.Equal(t, http.StatusOK, code, string(body))
	thinkingTurn(p, env.ProjectID, "Still none.")
	_, frames = chatTurn(t, env, sessionID, "And now?")
	require.Equal(t, "Still none.", contentOf(frames))
	require.Empty(t, reasoningOf(frames), "with thinking off the model streams none")
	last := streamedRequests(p)
	require.Equal(t, "disabled", last[len(last)-1].ThinkingType())
	require.Zero(t, p.Stats().Rejected)
}

// An approval in the middle of a thinking turn (--approval changes): the model thinks, asks to
// delete a node, and the turn waits for the owner; approved, it goes on, and DeepSeek, which
// refuses a request without the thinking that led to the tool call, accepts the call made after
// the wait, built from the stored transcript.
func TestApprovalInTheMiddleOfAThinkingTurn(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{Approval: "changes", Mode: "lab_automation_assistant", Configure: func(c *app.Config) {
		c.LLMProvider, c.LLMModel = "deepseek", "deepseek-flash"
	}})
	env.LLM.Emulate(fakeopenai.DeepSeekThinking)
	env.LLM.SetHandler(thinkingTitle("Deleting PC1"))
	pc := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Name: "PC1", X: -200, Y: 0})
	env.LLM.Enqueue(
		fakeopenai.Reply{Reasoning: []string{thinker + " deleting PC1, which needs the owner's approval."},
			ToolCalls: []fakeopenai.ToolCall{{ID: "call_delete", Name: "delete_gns3_node", Arguments: `{"node_ids": ["PC1"]}`}}},
		fakeopenai.Reply{Reasoning: []string{thinker + " the deletion's result."}, Content: fakeopenai.Words("PC1 is deleted.")},
	)

	s := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "Delete PC1", "approval_cards": true}, "")
	asked := s.Until(t, func(f e2eenv.Frame) bool { return f.Event == "approval_required" })
	sessionID, _ := startedIDs(t, asked)
	require.Contains(t, reasoningOf(asked), "needs the owner's approval", "the thinking streamed before the question")
	require.Zero(t, env.GNS3.Count(fakegns3.OpDeleteNode), "nothing is deleted before the decision")
	approval := pendingApproval(t, env, sessionID)
	require.Len(t, streamedRequests(env.LLM), 1, "the turn waits, no model call meanwhile")

	decide(t, env, sessionID, approval.ApprovalID, "approve", "")
	rest := s.UntilDone(t, true)
	require.Equal(t, "completed", rest[len(rest)-1].Data["status"], "%v", e2eenv.Types(rest))
	require.Contains(t, contentOf(rest), "PC1 is deleted.")
	require.Contains(t, reasoningOf(rest), "the deletion's result.")
	_, still := env.GNS3.Node(pc.ID)
	require.False(t, still, "PC1 was deleted once approved")

	require.Zero(t, env.LLM.Stats().Rejected, "DeepSeek refused the call made after the wait")
	streamed := streamedRequests(env.LLM)
	require.Len(t, streamed, 2)
	var sent []string
	for _, m := range streamed[1].Messages {
		if text, ok := m.ReasoningText(); ok && m.Role == "assistant" {
			sent = append(sent, text)
		}
	}
	require.Equal(t, []string{thinker + " deleting PC1, which needs the owner's approval."}, sent)
	requireNoThoughts(t, env, sessionID, append(asked, rest...))
}
