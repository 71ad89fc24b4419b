package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/egress"
	"github.com/gns3-copilot/gns3-copilot/livetopo"
	"github.com/gns3-copilot/gns3-copilot/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/metrics"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/relay"
	"github.com/gns3-copilot/gns3-copilot/tools"
	"github.com/gns3-copilot/gns3-copilot/vocab"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// LLMCall streams one model call: it builds the prompt from the stored transcript and the
// project's current topology, publishes text and tool-call deltas as they arrive, and stores
// the assistant message. Temporal owns retries (the client makes none), and a retried attempt
// first tells clients to drop the partial text of the failed one.
func (a *Activities) LLMCall(ctx context.Context, in workflows.LLMInput) (workflows.LLMResult, error) {
	turn, err := a.Repo.Turn(ctx, in.Turn.TurnID)
	if err != nil {
		return workflows.LLMResult{}, fmt.Errorf("loading turn: %w", err)
	}
	settings, err := a.LLM.Load(ctx, turn.LLMConfigID)
	if err != nil {
		return workflows.LLMResult{}, llmSettingsError(err)
	}
	if turn.Temperature != nil {
		t := *turn.Temperature
		settings.Temperature = &t
	}
	mode, err := tools.ParseMode(in.Turn.Mode)
	if err != nil {
		return workflows.LLMResult{}, temporal.NewNonRetryableApplicationError(err.Error(), vocab.ErrTypeLLMConfig, nil)
	}

	system, snap := a.systemPrompt(ctx, in.Turn, mode)
	transcript, priv, err := a.Repo.Transcript(ctx, turn, tools.IsPrivateMode)
	if err != nil {
		return workflows.LLMResult{}, fmt.Errorf("loading transcript: %w", err)
	}
	// A later turn's model must not be able to tell the student which fault was injected.
	transcript = models.RedactPrivate(transcript, priv, turn.ID)
	var offered []openai.Tool
	if !in.NoTools {
		offered = toolDefinitions(a.Tools.For(mode))
	}
	msgs := a.promptMessages(ctx, system, transcript, in.MessageIndex, turn.ID, settings, offered)
	if in.Step == 1 {
		// Only the turn's first call: later calls of the turn already had the note.
		if note := a.driftNote(ctx, in.Turn, snap); note != "" {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: note})
		}
	}

	msgID := models.MessageID(turn.ID, in.MessageIndex)
	if n := attempt(ctx); n > 1 {
		a.publish(ctx, turn.ID, relay.Payload{Type: relay.TypeRetry, SessionID: in.Turn.SessionID, Attempt: n})
	} else if a.leftOver(ctx, turn.ID, msgID) {
		a.publish(ctx, turn.ID, relay.Payload{Type: relay.TypeRetry, SessionID: in.Turn.SessionID, Attempt: 2})
	}

	req := openai.ChatCompletionRequest{
		Model:         settings.Model,
		Messages:      msgs,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Tools:         offered,
	}
	if settings.Temperature != nil {
		req.Temperature = float32(*settings.Temperature)
		if req.Temperature == 0 {
			// go-openai leaves a zero temperature out of the request (the provider's default,
			// often 1, would then apply); the smallest positive float is zero in effect.
			req.Temperature = math.SmallestNonzeroFloat32
		}
	}
	if settings.MaxTokens > 0 {
		req.MaxTokens = settings.MaxTokens
	}
	llmconfig.ShapeRequest(settings, &req)

	stop := keepAlive(ctx, 2*time.Second)
	defer stop()
	callCtx, release := a.abortable(ctx, turn.ID)
	began := time.Now()
	out, callErr := a.stream(callCtx, settings, req, in.Turn, msgID)
	if release() && callErr != nil {
		callErr, out.errClass = abortedError(), llmconfig.ErrorCancelled
	}
	a.Metrics.LLMCall(metrics.LLMCallStats{Provider: settings.Provider, Model: settings.Model, Took: time.Since(began),
		FirstToken: out.firstToken, InputTokens: out.inTokens, OutputTokens: out.outTokens, ErrorClass: out.errClass})

	// Whatever arrived is stored, also when the call failed or was cancelled: a retry replaces
	// it, and otherwise it is the partial answer the user already saw.
	stored := models.ChatMessage{ID: msgID, SessionID: turn.SessionID, TurnID: turn.ID, TurnSeq: turn.Seq,
		Idx: in.MessageIndex, Role: "assistant", Content: out.content}
	if callErr == nil && len(out.calls) > 0 {
		recs := make([]models.ToolCallRecord, len(out.calls))
		for i, c := range out.calls {
			recs[i].ID, recs[i].Type = c.ID, "function"
			recs[i].Function.Name, recs[i].Function.Arguments = c.Name, c.Arguments
		}
		b, _ := json.Marshal(recs)
		stored.ToolCalls = string(b)
	}
	meta := map[string]any{"model": settings.Model, "input_tokens": out.inTokens, "output_tokens": out.outTokens}
	if callErr != nil {
		meta["incomplete"] = true
	}
	mb, _ := json.Marshal(meta)
	stored.Metadata = string(mb)
	if callErr == nil || out.content != "" {
		// A cancelled context cannot write; the store must still happen.
		if err := a.Repo.SaveMessage(context.WithoutCancel(ctx), &stored); err != nil {
			return workflows.LLMResult{}, fmt.Errorf("storing the assistant message: %w", err)
		}
	}
	if callErr != nil {
		return workflows.LLMResult{}, callErr
	}
	return workflows.LLMResult{MessageID: msgID, ToolCalls: out.calls, FinishReason: out.finish,
		InputTokens: out.inTokens, OutputTokens: out.outTokens}, nil
}

// leftOver reports whether an earlier run of this model call streamed into the turn and died
// unseen. A local activity whose workflow task was lost with its worker runs again as attempt 1:
// the clue is the log, whose newest event is then that run's text of this message, or a tool
// call (every finished call's tool calls are followed by their tools' events).
func (a *Activities) leftOver(ctx context.Context, turnID, msgID string) bool {
	if !activity.IsActivity(ctx) || !activity.GetInfo(ctx).IsLocalActivity {
		return false // an activity's attempt counts its runs
	}
	ev, ok, err := a.Events.Last(ctx, turnID)
	if err != nil {
		a.logger(ctx).Warn("reading the turn's last event", "turn", turnID, "error", err)
		return false
	}
	if !ok {
		return false
	}
	switch ev.Type {
	case relay.TypeToolCall:
		return true
	case relay.TypeContent:
		var p struct {
			MessageID string `json:"message_id"`
		}
		return json.Unmarshal(ev.Data, &p) == nil && p.MessageID == msgID
	}
	return false
}

// systemPrompt is the mode's prompt plus the project as it is now, so the user never has to tell
// the model ids the copilot can look up itself. It also returns that project (nil when it could
// not be read).
func (a *Activities) systemPrompt(ctx context.Context, ref workflows.WorkRef, mode tools.Mode) (string, *livetopo.Snapshot) {
	var b strings.Builder
	// One set for both: a reload in between must not pair one set's prompt with another's recipes.
	sk := a.Skills.Current()
	b.WriteString(sk.SystemPrompt(mode))
	if mode == tools.TroubleshootingInjection {
		b.WriteString(recipesSection(sk.Recipes))
	}
	b.WriteString("\n\n## The project the user has open\n\n")
	token, err := a.Credentials.Get(ctx, ref.TurnID)
	if err != nil {
		b.WriteString("(The topology could not be read: the turn's GNS3 credentials are unavailable.)\n")
		return b.String(), nil
	}
	snap, err := a.readProject(ctx, a.GNS3.WithToken(token), ref.ProjectID)
	if err != nil {
		fmt.Fprintf(&b, "Project id: %s\n(The current topology could not be read: %v. Use get_gns3_topology.)\n", ref.ProjectID, err)
		return b.String(), nil
	}
	b.WriteString(tools.SnapshotContext(snap, a.GNS3.Host()))
	return b.String(), snap
}

func toolDefinitions(ts []tools.Tool) []openai.Tool {
	out := make([]openai.Tool, 0, len(ts))
	for _, t := range ts {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name(), Description: t.Description(), Parameters: t.Parameters(),
		}})
	}
	return out
}

// promptMessages turns the stored transcript into the request's messages, leaving out the
// message this call is about to write (a retry must not see its own failed attempt).
func (a *Activities) promptMessages(ctx context.Context, system string, transcript []models.ChatMessage, ownIdx int, turnID string,
	settings llmconfig.Settings, offered []openai.Tool) []openai.ChatCompletionMessage {
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}}
	for _, m := range transcript {
		if m.TurnID == turnID && m.Idx >= ownIdx {
			continue
		}
		if m.Role == "assistant" && m.Content == "" && m.ToolCalls == "" {
			continue // only carries a failed turn's error for the history; providers refuse it
		}
		msgs = append(msgs, toOpenAI(m))
	}
	return a.fitContext(ctx, msgs, settings, offered)
}

func toOpenAI(m models.ChatMessage) openai.ChatCompletionMessage {
	om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
	if m.Role == "tool" {
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

type streamOutput struct {
	content             string
	calls               []workflows.ToolCall
	finish              string
	inTokens, outTokens int64
	// For the metrics: the wait for the first delta, and the class of a failure.
	firstToken time.Duration
	errClass   string
}

// stream runs the request and publishes deltas. Tool calls are accumulated by index, so
// parallel calls whose fragments interleave come out whole.
func (a *Activities) stream(ctx context.Context, settings llmconfig.Settings, req openai.ChatCompletionRequest,
	ref workflows.WorkRef, msgID string) (streamOutput, error) {
	sessionID := ref.SessionID
	var out streamOutput
	began := time.Now()
	providerFailed := func(err error) (streamOutput, error) {
		out.errClass = llmconfig.ErrorClass(err)
		return out, classifyLLMError(ctx, err, settings)
	}
	client := openai.NewClientWithConfig(a.clientConfig(settings))
	s, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return providerFailed(err)
	}
	defer s.Close()
	// A base URL that serves a web page answers 200 with HTML, which the client reads as an
	// empty stream; the content type tells the two apart.
	if ct := s.Header().Get("Content-Type"); ct != "" && !strings.Contains(ct, "event-stream") && !strings.Contains(ct, "json") {
		out.errClass = llmconfig.ErrorOther
		return out, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the LLM provider at %s answered with %q instead of an event stream: check the base URL of your LLM configuration (it usually ends in /v1).",
			settings.BaseURL, providerMessage(ct)), vocab.ErrTypeLLMConfig, nil)
	}

	type acc struct {
		id, name string
		args     strings.Builder
		// What clients have of the arguments so far (see argsDue).
		sentLen int
		sentAt  time.Time
		sent    bool
	}
	calls := map[int]*acc{}
	var content strings.Builder
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out.content = content.String()
			return providerFailed(err)
		}
		// No heartbeat per chunk: keepAlive's ticker proves liveness, and a heartbeat on the
		// first chunk of every call was one more write on the Temporal server per model call.
		if chunk.Usage != nil {
			out.inTokens, out.outTokens = int64(chunk.Usage.PromptTokens), int64(chunk.Usage.CompletionTokens)
		}
		for _, ch := range chunk.Choices {
			if out.firstToken == 0 && (ch.Delta.Content != "" || len(ch.Delta.ToolCalls) > 0) {
				out.firstToken = time.Since(began)
			}
			if ch.Delta.Content != "" {
				content.WriteString(ch.Delta.Content)
				a.publishTurn(ctx, ref, relay.Payload{Type: relay.TypeContent, Content: ch.Delta.Content, MessageID: msgID, SessionID: sessionID})
			}
			for _, tc := range ch.Delta.ToolCalls {
				idx := len(calls)
				if tc.Index != nil {
					idx = *tc.Index
				} else if tc.ID == "" && len(calls) > 0 {
					idx = len(calls) - 1 // providers without indexes continue the last call
				}
				c := calls[idx]
				if c == nil {
					c = &acc{}
					calls[idx] = c
				}
				if tc.ID != "" {
					c.id = tc.ID
				}
				if tc.Function.Name != "" {
					c.name = tc.Function.Name
				}
				c.args.WriteString(tc.Function.Arguments)
				if now := time.Now(); !c.sent || argsDue(c.args.Len(), c.sentLen, now.Sub(c.sentAt)) {
					c.sent, c.sentLen, c.sentAt = true, c.args.Len(), now
					a.publishTurn(ctx, ref, relay.Payload{Type: relay.TypeToolCall, SessionID: sessionID, ToolCall: &relay.ToolCall{
						ID: c.id, Type: "function", Index: idx, Function: relay.ToolCallFunction{Name: c.name, Arguments: c.args.String()}}})
				}
			}
			if ch.FinishReason != "" {
				out.finish = string(ch.FinishReason)
			}
		}
	}
	out.content = content.String()
	if ctx.Err() != nil {
		out.errClass = llmconfig.ErrorClass(ctx.Err())
		return out, ctx.Err()
	}
	if private(ref) && strings.TrimSpace(out.content) != "" {
		// What the student sees of the model's words, as the history shows it.
		a.publish(ctx, ref.TurnID, relay.Payload{Type: relay.TypeContent, Content: models.InjectedText, MessageID: msgID, SessionID: sessionID})
	}
	if out.finish == "" {
		// A stream cut off cleanly looks like a short answer; without a finish reason it is not one.
		out.errClass = llmconfig.ErrorServer
		return out, temporal.NewApplicationError(fmt.Sprintf(
			"the LLM provider at %s ended the answer without finishing it; retrying.", settings.BaseURL), vocab.ErrTypeLLMUnavailable)
	}
	idxs := make([]int, 0, len(calls))
	for i := range calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		c := calls[i]
		if c.id == "" {
			// Some local servers send no ids; the transcript needs one to pair results.
			c.id = fmt.Sprintf("call_%s_%d", strings.ReplaceAll(msgID, "-", "")[:12], i)
		}
		args := c.args.String()
		a.publishTurn(ctx, ref, relay.Payload{Type: relay.TypeToolCall, SessionID: sessionID, ToolCall: &relay.ToolCall{
			ID: c.id, Type: "function", Index: i, Function: relay.ToolCallFunction{Name: c.name, Arguments: args, Complete: true}}})
		out.calls = append(out.calls, workflows.ToolCall{ID: c.id, Name: c.name, Arguments: args})
	}
	return out, nil
}

// argsDue decides whether a tool call's accumulated arguments are sent again. The seed's
// tool_call carries the whole arguments so far, so sending them on every chunk costs the square
// of their length (a 10 KB configuration in 7-byte chunks would be some 7 MB of events). They go
// out again when they have doubled, or at most every argsEvery while they grow, which keeps the
// total linear and the card on the page moving; the complete arguments always follow at the end.
func argsDue(length, sentLen int, since time.Duration) bool {
	return length > sentLen && (length >= 2*sentLen || since >= argsEvery)
}

// argsEvery is how often growing tool-call arguments are sent at most, apart from doubling.
const argsEvery = 250 * time.Millisecond

func (a *Activities) clientConfig(s llmconfig.Settings) openai.ClientConfig {
	httpClient := a.HTTP
	switch {
	case !s.Trusted && a.UntrustedHTTP != nil:
		httpClient = a.UntrustedHTTP
	case !s.Trusted:
		httpClient = strictClient()
	}
	return llmconfig.ClientConfig(s, httpClient)
}

// strictClient is the outbound client when none was configured: it fails closed, reaching
// public addresses only.
var strictClient = sync.OnceValue(func() *http.Client {
	p, _ := egress.New(nil, false)
	return p.Client()
})

// maxProviderMessage bounds how much of a provider's own error message reaches the user.
const maxProviderMessage = 300

// classifyLLMError decides what Temporal should do with a failed call and writes the message a
// user reads: which setting to check when retrying cannot help. What the server at the base URL
// said is shown only when it is an OpenAI-style error object, and then only its message,
// clipped: that server may be anything, and its body is none of the user's business.
func classifyLLMError(ctx context.Context, err error, s llmconfig.Settings) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	where := fmt.Sprintf("the LLM provider at %s (model %s)", s.BaseURL, s.Model)
	var refused *egress.RefusedError
	if errors.As(err, &refused) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"%s was not contacted: %v. LLM configurations saved by regular users may only reach public addresses: "+
				"point base_url at a public endpoint, or ask the operator to allow this host (--llm-allow-hosts) "+
				"or a GNS3 superadmin to save the configuration.", where, refused), vocab.ErrTypeLLMConfig, nil)
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status, msg := 0, ""
	if errors.As(err, &reqErr) {
		status = reqErr.HTTPStatusCode
		body := strings.TrimSpace(string(reqErr.Body))
		if strings.HasPrefix(body, "<") || strings.Contains(strings.ToLower(body), "<html") {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"%s answered with an HTML page (HTTP %d) instead of the OpenAI API: check the base URL of your LLM configuration (it usually ends in /v1).",
				where, status), vocab.ErrTypeLLMConfig, nil)
		}
	}
	if errors.As(err, &apiErr) {
		if apiErr.HTTPStatusCode != 0 {
			status = apiErr.HTTPStatusCode
		}
		msg = providerMessage(apiErr.Message)
	}
	said := strings.TrimSpace(fmt.Sprintf("HTTP %d %s", status, http.StatusText(status)))
	if msg != "" {
		said = fmt.Sprintf("HTTP %d: %s", status, msg)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"%s rejected the API key (%s): check the api_key of your LLM configuration.", where, said),
			vocab.ErrTypeLLMAuth, nil)
	case status == http.StatusNotFound:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"%s answered %s: check the base URL and the model name of your LLM configuration.", where, said),
			vocab.ErrTypeLLMConfig, nil)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"%s refused the request (%s).", where, said), vocab.ErrTypeLLMBadRequest, nil)
	case status != 0:
		return temporal.NewApplicationError(fmt.Sprintf("%s failed (%s).", where, said), vocab.ErrTypeLLMUnavailable)
	case apiErr != nil:
		// An error object sent in the middle of a stream.
		if msg == "" {
			msg = "(no message)"
		}
		return temporal.NewApplicationError(fmt.Sprintf("%s reported an error: %s", where, msg), vocab.ErrTypeLLMUnavailable)
	}
	var jsonErr *json.SyntaxError
	if errors.As(err, &jsonErr) || strings.Contains(err.Error(), "invalid character '<'") {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"%s did not answer in JSON: check the base URL of your LLM configuration.", where), vocab.ErrTypeLLMConfig, nil)
	}
	return temporal.NewApplicationError(fmt.Sprintf("%s could not be reached: %s", where, transportProblem(err)), vocab.ErrTypeLLMUnavailable)
}

// providerMessage makes a provider's error message safe to show: one line, clipped.
func providerMessage(m string) string {
	m = strings.Join(strings.FieldsFunc(m, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(m) > maxProviderMessage {
		m = string([]rune(m)[:maxProviderMessage]) + "…"
	}
	return m
}

// transportProblem describes a failure below HTTP. Go quotes the first bytes of an answer that
// is not HTTP ("malformed HTTP response \"SSH-2.0-…\""), which would show what the server is;
// that part is left out.
func transportProblem(err error) string {
	var ne net.Error
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "its host name was not found (DNS)"
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	}
	msg := err.Error()
	if strings.Contains(msg, "malformed HTTP") {
		return "the server did not answer in HTTP"
	}
	return providerMessage(msg)
}
