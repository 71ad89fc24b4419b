package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// reportLatency reports the p50 and p99 of ds, in milliseconds.
func reportLatency(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return float64(s[max(0, min(i, len(s)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op") // the percentiles say it; the mean of a skewed run does not
}

// timedGets serves path b.N times in process (auth and handler included, no network) and
// reports the latency percentiles, checking each answer.
func timedGets(b *testing.B, e *transcriptEnv, path string, wantTotal string) {
	ds := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		w := e.do("tok-alice", path)
		ds = append(ds, time.Since(start))
		if w.Code != http.StatusOK || w.Header().Get(TotalCountHeader) != wantTotal {
			b.Fatalf("%s: %d total %q %.200s", path, w.Code, w.Header().Get(TotalCountHeader), w.Body.String())
		}
	}
	reportLatency(b, ds)
}

// BenchmarkSessionList reads the session list of a user with 10,000 sessions in one project
// (20 of them pinned, each with a finished turn), on SQLite: the first page as GNS3's panel
// reads it, a deep page, and the largest page.
func BenchmarkSessionList(b *testing.B) {
	e := newTranscriptEnv(b)
	alice := e.userID("tok-alice")
	pinned := map[int]bool{}
	for i := 0; i < 10000; i += 500 {
		pinned[i] = true
	}
	ids := e.manySessions(alice, 10000, pinned)
	e.manySessionsNamed(e.userID("tok-bob"), "bob", 2000, nil)
	turns := make([]models.ChatTurn, len(ids))
	for i, id := range ids {
		turns[i] = models.ChatTurn{ID: "t-" + id, SessionID: id, Seq: 1, UserID: alice, ProjectID: e.project,
			Status: domain.TurnCompleted, Mode: domain.ModeTeachingAssistant, WorkflowID: "w-" + id, CreatedAt: time.Now()}
	}
	if err := e.repo.DB.CreateInBatches(turns, 500).Error; err != nil {
		b.Fatal(err)
	}
	base := "/v3/projects/" + e.project + "/chat/sessions"
	for _, c := range []struct{ name, query string }{
		{"first-page", ""},
		{"deep-page", "?limit=100&offset=9900"},
		{"largest-page", "?limit=500&offset=5000"},
		{"by-mode-first-page", "?copilot_mode=teaching_assistant"},
	} {
		b.Run(c.name, func(b *testing.B) { timedGets(b, e, base+c.query, "10000") })
	}
}

// BenchmarkHistory reads a session of 2,000 messages (500 turns of a question, a tool call, its
// result and an answer, written through the repository as the worker writes them), on SQLite:
// the newest 100, as GNS3's panel reads them, and the oldest 100.
func BenchmarkHistory(b *testing.B) {
	e := newTranscriptEnv(b)
	alice := e.userID("tok-alice")
	ctx := context.Background()
	result := deviceResult().JSON()
	sid := ""
	for i := 0; i < 500; i++ {
		sess, turn, _, err := e.repo.StartTurn(ctx, models.StartTurnParams{SessionID: sid, UserID: alice, ProjectID: e.project,
			Message: fmt.Sprintf("Question %d: why can PC1 not reach PC2?", i), Mode: domain.ModeTeachingAssistant,
			WorkflowID: func(s, t string) string { return s + "/" + t }})
		if err != nil {
			b.Fatal(err)
		}
		sid = sess.ThreadID
		for idx, m := range []models.ChatMessage{
			{Role: "assistant", Content: "Let me look.", ToolCalls: `[{"id":"call_1","type":"function","function":{"name":"execute_multiple_device_commands","arguments":"{\"device_names\":[\"PC1\",\"PC2\"],\"commands\":[\"show ip\"]}"}}]`},
			{Role: "tool", Name: "execute_multiple_device_commands", ToolCallID: "call_1", Content: result},
			{Role: "assistant", Content: strings.Repeat("PC1 has 10.0.0.1/24 and PC2 has no gateway. ", 10)},
		} {
			m.ID, m.SessionID, m.TurnID, m.TurnSeq, m.Idx = models.MessageID(turn.ID, idx+1), sid, turn.ID, turn.Seq, idx+1
			if err := e.repo.SaveMessage(ctx, &m); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := e.repo.FinalizeTurn(ctx, models.FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted}); err != nil {
			b.Fatal(err)
		}
	}
	path := "/v3/projects/" + e.project + "/chat/sessions/" + sid + "/history"
	for _, c := range []struct{ name, query string }{
		{"newest-100", ""},
		{"oldest-100", "?offset=1900"},
		{"newest-1000", "?limit=1000"},
	} {
		b.Run(c.name, func(b *testing.B) { timedGets(b, e, path+c.query, strconv.Itoa(2000)) })
	}
}
