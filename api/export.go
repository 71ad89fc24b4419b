package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// exportAll bounds an export; a session holds far fewer messages.
const exportAll = 1 << 20

// sessionExport is the JSON export: the history's shape (thread_id, title, messages, …) with
// the session's statistics beside it, so one file tells the whole conversation.
type sessionExport struct {
	Format     string          `json:"format"`
	ExportedAt string          `json:"exported_at"`
	ThreadID   string          `json:"thread_id"`
	Title      string          `json:"title"`
	ProjectID  string          `json:"project_id"`
	CreatedAt  string          `json:"created_at"`
	UpdatedAt  string          `json:"updated_at"`
	LLMCalls   int64           `json:"llm_calls"`
	Session    sessionView     `json:"session"`
	Messages   []openAIMessage `json:"messages"`
	// Approvals are the session's approvals, oldest first ([] when none, or none are kept).
	Approvals []models.ApprovalView `json:"approvals"`
}

func (s *Server) exportSession(c *gin.Context) {
	format := strings.ToLower(strings.TrimSpace(c.DefaultQuery("format", "json")))
	if format == "md" {
		format = "markdown"
	}
	if format != "json" && format != "markdown" {
		abort(c, http.StatusUnprocessableEntity, "format must be json or markdown.")
		return
	}
	sess, ok := s.session(c)
	if !ok {
		return
	}
	msgs, err := s.studentHistory(c.Request.Context(), sess.ThreadID, exportAll)
	if err != nil {
		s.internalError(c, err, "Loading the conversation failed")
		return
	}
	approvals := []models.ApprovalView{}
	if s.deps.Approvals != nil {
		list, err := s.deps.Approvals.Repo.ForSession(c.Request.Context(), sess.ThreadID)
		if err != nil {
			s.internalError(c, err, "Loading the session's approvals failed")
			return
		}
		approvals = approvalViews(list)
	}
	ex := sessionExport{Approvals: approvals, Format: "gns3-copilot-session/v1", ExportedAt: isoTime(time.Now()), ThreadID: sess.ThreadID,
		Title: sess.Title, ProjectID: sess.ProjectID, CreatedAt: isoTime(sess.CreatedAt), UpdatedAt: isoTime(sess.UpdatedAt),
		LLMCalls: sess.LLMCallsCount, Session: viewSession(sess), Messages: historyMessages(msgs)}

	var body []byte
	ctype, ext := "application/json; charset=utf-8", ".json"
	if format == "markdown" {
		body = []byte(markdownExport(ex, msgs))
		ctype, ext = "text/markdown; charset=utf-8", ".md"
	} else if body, err = json.MarshalIndent(ex, "", "  "); err != nil {
		s.internalError(c, err, "Exporting the conversation failed")
		return
	}
	c.Header("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": exportFileName(sess.Title) + ext}))
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusOK, ctype, body)
}

// studentHistory is the session's history as its owner may read it: injection turns show which
// tools ran, never with which arguments or results (see models.RedactPrivate).
func (s *Server) studentHistory(ctx context.Context, sessionID string, limit int) ([]models.ChatMessage, error) {
	msgs, err := s.deps.Repo.History(ctx, sessionID, limit)
	if err != nil {
		return nil, err
	}
	return s.redactForStudent(ctx, sessionID, msgs)
}

// studentHistoryPage is studentHistory of one page (models.ChatRepository.HistoryPage), with
// the session's count of committed messages.
func (s *Server) studentHistoryPage(ctx context.Context, sessionID string, limit, offset int) ([]models.ChatMessage, int64, error) {
	msgs, total, err := s.deps.Repo.HistoryPage(ctx, sessionID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	msgs, err = s.redactForStudent(ctx, sessionID, msgs)
	return msgs, total, err
}

// redactForStudent hides what the session's private (injection) turns did.
func (s *Server) redactForStudent(ctx context.Context, sessionID string, msgs []models.ChatMessage) ([]models.ChatMessage, error) {
	priv, err := s.deps.Repo.PrivateTurns(ctx, sessionID, tools.IsPrivateMode)
	if err != nil {
		return nil, err
	}
	return models.RedactPrivate(msgs, priv, ""), nil
}

// historyMessages renders stored messages in the OpenAIMessage shape of GNS3's chat API.
func historyMessages(msgs []models.ChatMessage) []openAIMessage {
	out := make([]openAIMessage, len(msgs))
	for i, m := range msgs {
		om := openAIMessage{ID: m.ID, Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, CreatedAt: isoTime(m.CreatedAt),
			Name: m.Name, ToolCallID: m.ToolCallID, Metadata: jsonObject(m.Metadata)}
		if m.ToolCalls != "" {
			om.ToolCalls = json.RawMessage(m.ToolCalls)
		}
		out[i] = om
	}
	return out
}

// exportFileName makes a file name from a title: letters and digits kept (any script), every
// other run of characters one dash, at most 60 characters.
func exportFileName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.TrimSpace(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
			dash = false
			continue
		}
		dash = true
	}
	name := []rune(b.String())
	if len(name) > 60 {
		name = name[:60]
	}
	if s := strings.TrimRight(string(name), "-"); s != "" {
		return s
	}
	return "conversation"
}

// markdownExport writes the conversation for people: user and assistant text as written, each
// tool call with its arguments, each standard-format result as a compact table with outputs in
// code blocks.
func markdownExport(ex sessionExport, msgs []models.ChatMessage) string {
	var b strings.Builder
	st := ex.Session
	fmt.Fprintf(&b, "# %s\n\n", oneLine(ex.Title))
	fmt.Fprintf(&b, "- Project: `%s`\n- Session: `%s`\n", ex.ProjectID, ex.ThreadID)
	fmt.Fprintf(&b, "- Started: %s · last activity: %s\n", ex.CreatedAt, ex.UpdatedAt)
	fmt.Fprintf(&b, "- %d messages · %d LLM calls · %d tokens (%d in, %d out", st.MessageCount, st.LLMCallsCount, st.TotalTokens, st.InputTokens, st.OutputTokens)
	if st.ReasoningTokens > 0 {
		fmt.Fprintf(&b, ", of which %d reasoning", st.ReasoningTokens)
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, "- Exported: %s\n", ex.ExportedAt)
	if len(ex.Approvals) > 0 {
		b.WriteString("\n## Approvals\n\n| Tool | Kind | Status | Decided by | Decided at | Comment |\n|---|---|---|---|---|---|\n")
		for _, a := range ex.Approvals {
			at := ""
			if a.DecidedAt != nil {
				at = *a.DecidedAt
			}
			status := a.Status
			if a.Standing {
				status += " (approve all)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", tableCell(a.ToolName), tableCell(a.Kind), tableCell(status),
				tableCell(a.DecidedBy), tableCell(at), tableCell(a.Comment))
		}
	}

	toolNames := map[string]string{}
	for _, m := range msgs {
		when := isoTime(m.CreatedAt)
		switch m.Role {
		case "user":
			fmt.Fprintf(&b, "\n---\n\n## User · %s\n\n%s\n", when, strings.TrimSpace(m.Content))
		case "assistant":
			fmt.Fprintf(&b, "\n---\n\n## Copilot · %s\n\n", when)
			if thought := strings.TrimSpace(m.Reasoning); thought != "" {
				// Folded, as the page shows it: a reader opens it when they want it.
				b.WriteString("<details><summary>Thinking</summary>\n\n" + codeBlock("text", thought) + "\n</details>\n\n")
			}
			if text := strings.TrimSpace(m.Content); text != "" {
				b.WriteString(text + "\n")
			}
			var calls []models.ToolCallRecord
			if m.ToolCalls != "" && json.Unmarshal([]byte(m.ToolCalls), &calls) == nil {
				for _, tc := range calls {
					toolNames[tc.ID] = tc.Function.Name
					fmt.Fprintf(&b, "\n**Tool call** `%s`\n\n", tc.Function.Name)
					b.WriteString(codeBlock("json", prettyJSON(tc.Function.Arguments)))
				}
			}
		case "tool":
			name := m.Name
			if name == "" {
				name = toolNames[m.ToolCallID]
			}
			b.WriteString("\n" + toolResultMarkdown(name, m.Content))
		default:
			fmt.Fprintf(&b, "\n---\n\n## %s · %s\n\n%s\n", m.Role, when, strings.TrimSpace(m.Content))
		}
	}
	return b.String()
}

// resultView is the part of the standard format the Markdown export shows.
type resultView struct {
	Success    *bool  `json:"success"`
	Total      int    `json:"total"`
	Successful int    `json:"successful"`
	Failed     int    `json:"failed"`
	Error      string `json:"error"`
	Data       []struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
		Result string `json:"result"`
		Error  string `json:"error"`
	} `json:"data"`
	Metadata struct {
		ExecutionTime *float64 `json:"execution_time"`
	} `json:"metadata"`
}

func toolResultMarkdown(name, content string) string {
	var b strings.Builder
	var r resultView
	if json.Unmarshal([]byte(content), &r) != nil || r.Success == nil {
		fmt.Fprintf(&b, "**Tool result** `%s`\n\n", name)
		b.WriteString(codeBlock("text", content))
		return b.String()
	}
	fmt.Fprintf(&b, "**Tool result** `%s`: %d total, %d successful, %d failed", name, r.Total, r.Successful, r.Failed)
	if r.Metadata.ExecutionTime != nil {
		fmt.Fprintf(&b, " · %.1f s", *r.Metadata.ExecutionTime)
	}
	b.WriteString("\n\n")
	if r.Error != "" {
		fmt.Fprintf(&b, "> Error: %s\n\n", oneLine(r.Error))
	}
	if len(r.Data) == 0 {
		return b.String()
	}
	b.WriteString("| Item | Status | Result |\n|---|---|---|\n")
	type output struct{ name, text string }
	var long []output
	for _, it := range r.Data {
		label := it.Name
		if label == "" {
			label = it.ID
		}
		text := it.Result
		if it.Status != "success" && it.Error != "" {
			text = it.Error
		}
		cell := oneLine(text)
		if strings.Contains(strings.TrimSpace(text), "\n") || len(text) > 120 {
			long = append(long, output{label, it.Result})
			cell = "see output below"
			if it.Error != "" {
				cell = oneLine(it.Error)
			}
		}
		fmt.Fprintf(&b, "| %s | %s %s | %s |\n", tableCell(label), statusSign(it.Status), tableCell(it.Status), tableCell(cell))
	}
	for _, o := range long {
		if strings.TrimSpace(o.text) == "" {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n\n", tableCell(o.name))
		b.WriteString(codeBlock("text", o.text))
	}
	return b.String()
}

func statusSign(status string) string {
	switch status {
	case "success":
		return "✓"
	case "partial_success":
		return "!"
	case "failed":
		return "✗"
	}
	return "?"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func tableCell(s string) string {
	s = oneLine(s)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

func prettyJSON(s string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(s), "", "  ") != nil {
		return s
	}
	return buf.String()
}

// codeBlock fences text with more backticks than it contains in a row, so device output that
// holds backticks cannot end the block early.
func codeBlock(lang, text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}
