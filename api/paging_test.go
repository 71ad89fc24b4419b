package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// manySessions writes n sessions of the user straight into the table, updated a minute apart
// (session i at minute i, so the highest i is the newest); the sessions named in pinned are
// pinned. It returns their ids by i.
func (e *transcriptEnv) manySessions(userID string, n int, pinned map[int]bool) []string {
	return e.manySessionsNamed(userID, "s", n, pinned)
}

// manySessionsNamed is manySessions with the ids prefixed by prefix.
func (e *transcriptEnv) manySessionsNamed(userID, prefix string, n int, pinned map[int]bool) []string {
	e.t.Helper()
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	rows := make([]models.ChatSession, n)
	for i := range rows {
		ids[i] = fmt.Sprintf("%s-%05d", prefix, i)
		at := base.Add(time.Duration(i) * time.Minute)
		rows[i] = models.ChatSession{ThreadID: ids[i], UserID: userID, ProjectID: e.project, Title: ids[i],
			Metadata: `{"copilot_mode":"teaching_assistant"}`, Stats: "{}", CreatedAt: at, UpdatedAt: at, Pinned: pinned[i]}
	}
	if err := e.repo.DB.CreateInBatches(rows, 500).Error; err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// sessionPage reads one page of alice's session list, requiring a 200 with X-Total-Count.
func (e *transcriptEnv) sessionPage(query string) ([]string, int) {
	e.t.Helper()
	w := e.do("tok-alice", "/v3/projects/"+e.project+"/chat/sessions"+query)
	if w.Code != http.StatusOK {
		e.t.Fatalf("%s: %d %s", query, w.Code, w.Body.String())
	}
	total, err := strconv.Atoi(w.Header().Get(TotalCountHeader))
	if err != nil {
		e.t.Fatalf("%s: X-Total-Count %q", query, w.Header().Get(TotalCountHeader))
	}
	var list []sessionView
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		e.t.Fatal(err)
	}
	ids := make([]string, len(list))
	for i := range list {
		ids[i] = list[i].ThreadID
	}
	return ids, total
}

func TestSessionListPagesWithTheTotalPinnedFirst(t *testing.T) {
	e := newTranscriptEnv(t)
	ids := e.manySessions(e.userID("tok-alice"), 250, map[int]bool{3: true, 120: true})
	e.manySessionsNamed(e.userID("tok-bob"), "bob", 1, nil) // someone else's, counted nowhere
	// The whole list's order: the pinned (newest first), then every other session newest first.
	want := []string{ids[120], ids[3]}
	for i := len(ids) - 1; i >= 0; i-- {
		if i != 120 && i != 3 {
			want = append(want, ids[i])
		}
	}

	// No parameters: the first 100, as GNS3's panel has always read them.
	got, total := e.sessionPage("")
	require.Equal(t, 250, total)
	require.Equal(t, want[:100], got)

	// Pages of 100 from offset 0, 100, 200 are the whole list once; the last one is partial.
	var all []string
	for _, off := range []int{0, 100, 200} {
		page, total := e.sessionPage("?limit=100&offset=" + strconv.Itoa(off))
		require.Equal(t, 250, total)
		all = append(all, page...)
	}
	require.Equal(t, want, all)
	page, _ := e.sessionPage("?offset=200")
	require.Len(t, page, 50)
	// The largest page holds them all; past the end is an empty page, still with the total.
	page, _ = e.sessionPage("?limit=500")
	require.Equal(t, want, page)
	page, total = e.sessionPage("?offset=250")
	require.Empty(t, page)
	require.Equal(t, 250, total)
	page, _ = e.sessionPage("?limit=1&offset=249")
	require.Equal(t, []string{ids[0]}, page)
	// Both prefixes page alike, with the mode filter counted in the total.
	w := e.do("tok-alice", "/v3/copilot/projects/"+e.project+"/chat/sessions?copilot_mode=lab_automation_assistant")
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "0", w.Header().Get(TotalCountHeader))
	require.JSONEq(t, `[]`, w.Body.String())
	page, total = e.sessionPage("?copilot_mode=teaching_assistant&limit=2&offset=1")
	require.Equal(t, want[1:3], page)
	require.Equal(t, 250, total)
}

func TestPagingParametersOutOfRangeAre422NamingTheRange(t *testing.T) {
	e := newTranscriptEnv(t)
	sid := e.conversation("tok-alice", domain.ModeTeachingAssistant, "One", "hello", deviceResult())
	sessions := "/v3/projects/" + e.project + "/chat/sessions"
	history := sessions + "/" + sid + "/history"
	for _, c := range []struct{ path, query, want string }{
		{sessions, "limit=0", "limit must be a whole number from 1 to 500."},
		{sessions, "limit=501", "limit must be a whole number from 1 to 500."},
		{sessions, "limit=ten", "limit must be a whole number from 1 to 500."},
		{sessions, "limit=1.5", "limit must be a whole number from 1 to 500."},
		{sessions, "limit=-3", "limit must be a whole number from 1 to 500."},
		{sessions, "offset=-1", "offset must be a whole number from 0 to 1000000."},
		{sessions, "offset=1000001", "offset must be a whole number from 0 to 1000000."},
		{sessions, "offset=1e3", "offset must be a whole number from 0 to 1000000."},
		{sessions, "limit=5&offset=x", "offset must be a whole number from 0 to 1000000."},
		{history, "limit=0", "limit must be a whole number from 1 to 1000."},
		{history, "limit=1001", "limit must be a whole number from 1 to 1000."},
		{history, "offset=-5", "offset must be a whole number from 0 to 1000000."},
		{history, "offset=two", "offset must be a whole number from 0 to 1000000."},
	} {
		w := e.do("tok-alice", c.path+"?"+c.query)
		var body struct{ Message string }
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != http.StatusUnprocessableEntity || body.Message != c.want {
			t.Errorf("%s?%s: %d %s, want 422 %q", c.path[strings.LastIndex(c.path, "/"):], c.query, w.Code, w.Body.String(), c.want)
		}
		if w.Header().Get(TotalCountHeader) != "" {
			t.Errorf("%s: a refused page has a total", c.query)
		}
	}
}

func TestHistoryPagesNewestFirstWithTheTotal(t *testing.T) {
	e := newTranscriptEnv(t)
	sid := ""
	for i := 0; i < 3; i++ {
		// Each conversation is a new session of four messages; the last one is read.
		sid = e.conversation("tok-alice", domain.ModeTeachingAssistant, "T", fmt.Sprintf("question %d", i), deviceResult())
	}
	path := "/v3/projects/" + e.project + "/chat/sessions/" + sid + "/history"
	read := func(query string) ([]openAIMessage, string) {
		t.Helper()
		w := e.do("tok-alice", path+query)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		var h struct {
			ThreadID string          `json:"thread_id"`
			Messages []openAIMessage `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &h))
		require.Equal(t, sid, h.ThreadID)
		return h.Messages, w.Header().Get(TotalCountHeader)
	}
	roles := func(msgs []openAIMessage) string {
		out := make([]string, len(msgs))
		for i, m := range msgs {
			out[i] = m.Role
		}
		return strings.Join(out, ",")
	}
	all, total := read("")
	require.Equal(t, "4", total)
	require.Equal(t, "user,assistant,tool,assistant", roles(all))
	require.Equal(t, "question 2", all[0].Content)
	// The newest two, the two before them, then nothing; each page oldest first.
	newest, total := read("?limit=2")
	require.Equal(t, "4", total)
	require.Equal(t, all[2:], newest)
	older, _ := read("?limit=2&offset=2")
	require.Equal(t, all[:2], older)
	past, total := read("?limit=2&offset=4")
	require.Empty(t, past)
	require.Equal(t, "4", total)
	// The page's own reading of up to 1,000 messages still answers.
	thousand, _ := read("?limit=1000")
	require.Equal(t, all, thousand)
}
