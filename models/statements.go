package models

import (
	"context"
	"database/sql"
	"errors"

	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/sqlstmt"
)

// newStatement is a statement of the turn's path (internal/sqlstmt).
func newStatement(text string) sqlstmt.Statement { return sqlstmt.New(text) }

// scanOne runs s on db and scans its first row into dest; no row is ErrNotFound.
func scanOne(ctx context.Context, db *gorm.DB, s sqlstmt.Statement, args []any, dest ...any) error {
	err := s.Row(ctx, db, args, dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// The statements of a turn's rows. Their columns are listed rather than *, so that a column a
// later migration adds does not shift what the scans read.
const (
	turnColumns      = "id, session_id, seq, user_id, project_id, status, mode, llm_config_id, workflow_id, error, temperature, created_at, finished_at"
	llmConfigColumns = "id, owner_type, owner_id, name, model_type, provider, base_url, model, temperature, api_key_sealed, api_key_hint, max_tokens, context_limit, context_strategy, copilot_mode, reasoning_effort, is_default, endpoint_trusted, extra, inherits_from, version, created_at, updated_at"
	messageColumns   = "id, session_id, turn_id, turn_seq, idx, role, content, name, tool_call_id, tool_calls, metadata, committed, aside, sub, created_at, reasoning, reasoning_state, model_context"

	insertMessageText = "INSERT INTO chat_messages (" + messageColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

var (
	configsOfOwner  = newStatement("SELECT " + llmConfigColumns + " FROM llm_model_configs WHERE owner_type = ? AND owner_id = ? ORDER BY created_at, id")
	turnByID        = newStatement("SELECT " + turnColumns + " FROM chat_turns WHERE id = ?")
	runningOfUserN  = newStatement("SELECT count(*) FROM chat_turns WHERE " + runningOfUser(domain.TurnRunning))
	insertSession   = newStatement("INSERT INTO chat_sessions (thread_id, user_id, project_id, title, message_count, llm_calls_count, input_tokens, output_tokens, total_tokens, created_at, updated_at, metadata, stats, pinned, title_locked) VALUES (?, ?, ?, ?, 0, 0, 0, 0, 0, ?, ?, ?, '{}', ?, ?) RETURNING id")
	insertTurnRow   = newStatement("INSERT INTO chat_turns (" + turnColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	insertMessage   = newStatement(insertMessageText)
	upsertMessage   = newStatement(insertMessageText + " ON CONFLICT (id) DO UPDATE SET content = excluded.content, tool_calls = excluded.tool_calls, metadata = excluded.metadata, name = excluded.name, tool_call_id = excluded.tool_call_id, role = excluded.role, reasoning = excluded.reasoning, reasoning_state = excluded.reasoning_state, model_context = excluded.model_context")
	stagedOfTurn    = newStatement("SELECT " + messageColumns + " FROM chat_messages WHERE turn_id = ? ORDER BY idx")
	commitTurnRows  = newStatement("UPDATE chat_messages SET committed = ? WHERE turn_id = ?")
	finishTurnRow   = newStatement("UPDATE chat_turns SET status = ?, error = ?, finished_at = ? WHERE id = ?")
	transcriptOf    = newStatement("SELECT m.id, m.session_id, m.turn_id, m.turn_seq, m.idx, m.role, m.content, m.name, m.tool_call_id, m.tool_calls, m.metadata, m.committed, m.aside, m.sub, m.created_at, m.reasoning, m.reasoning_state, m.model_context, COALESCE(t.mode, '') FROM chat_messages m LEFT JOIN chat_turns t ON t.id = m.turn_id WHERE m.session_id = ? AND (m.committed = ? OR m.turn_id = ?) AND m.aside = ? ORDER BY m.turn_seq, m.idx, m.sub")
	deleteMessage   = newStatement("DELETE FROM chat_messages WHERE id = ?")
	addUsage        = newStatement("INSERT INTO user_token_usage (user_id, day, input_tokens, output_tokens) VALUES (?, ?, ?, ?) ON CONFLICT (user_id, day) DO UPDATE SET input_tokens = user_token_usage.input_tokens + excluded.input_tokens, output_tokens = user_token_usage.output_tokens + excluded.output_tokens")
	titleWanted     = newStatement("SELECT s.title_locked, EXISTS (SELECT 1 FROM chat_turns t WHERE t.session_id = s.thread_id AND t.status = '" + domain.TurnCompleted + "') FROM chat_sessions s WHERE s.thread_id = ?")
	markBySession   = newStatement("SELECT session_id, project_id, summary, updated_at FROM topology_marks WHERE session_id = ?")
	addSessionStats = newStatement(`UPDATE chat_sessions SET message_count = message_count + ?, llm_calls_count = llm_calls_count + ?,
		input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, total_tokens = total_tokens + ?,
		reasoning_tokens = reasoning_tokens + ?, cached_tokens = cached_tokens + ?, last_message_at = ?, updated_at = ?,
		title = CASE WHEN title_locked OR ? = '' THEN title ELSE ? END
		WHERE thread_id = ? RETURNING title_locked`)
)

// scanTurn reads a row of turnColumns into t.
func scanTurn(scan func(dest ...any) error, t *ChatTurn) error {
	var (
		errText  sql.NullString
		temp     sql.NullFloat64
		created  sql.NullTime
		finished sql.NullTime
	)
	if err := scan(&t.ID, &t.SessionID, &t.Seq, &t.UserID, &t.ProjectID, &t.Status, &t.Mode, &t.LLMConfigID, &t.WorkflowID,
		&errText, &temp, &created, &finished); err != nil {
		return err
	}
	t.Error, t.CreatedAt = errText.String, created.Time
	t.Temperature, t.FinishedAt = nil, nil
	if temp.Valid {
		t.Temperature = &temp.Float64
	}
	if finished.Valid {
		t.FinishedAt = &finished.Time
	}
	return nil
}

// llmConfigFields are pointers to c's fields in llmConfigColumns' order.
func llmConfigFields(c *LLMModelConfig) []any {
	return []any{&c.ID, &c.OwnerType, &c.OwnerID, &c.Name, &c.ModelType, &c.Provider, &c.BaseURL, &c.Model, &c.Temperature,
		&c.APIKeySealed, &c.APIKeyHint, &c.MaxTokens, &c.ContextLimit, &c.ContextStrategy, &c.CopilotMode, &c.ReasoningEffort,
		&c.IsDefault, &c.EndpointTrusted, &c.Extra, &c.InheritsFrom, &c.Version, &c.CreatedAt, &c.UpdatedAt}
}

// turnArgs are t's values in turnColumns' order.
func turnArgs(t *ChatTurn) []any {
	return []any{t.ID, t.SessionID, t.Seq, t.UserID, t.ProjectID, t.Status, t.Mode, t.LLMConfigID, t.WorkflowID,
		t.Error, t.Temperature, t.CreatedAt, t.FinishedAt}
}

// messageFields are pointers to m's fields in messageColumns' order, the nullable ones through
// ns; ns.apply copies those into m once the row is read.
func messageFields(m *ChatMessage, ns *nullMessage) []any {
	return []any{&m.ID, &m.SessionID, &m.TurnID, &m.TurnSeq, &m.Idx, &m.Role, &ns.content, &ns.name, &ns.toolCallID,
		&ns.toolCalls, &ns.metadata, &m.Committed, &m.Aside, &m.Sub, &ns.created, &ns.reasoning, &ns.reasoningState, &m.ModelContext}
}

// nullMessage holds the columns of a message that may be NULL in rows written before they had
// defaults (or before the column existed), or by GORM for an empty string.
type nullMessage struct {
	content, name, toolCallID, toolCalls, metadata sql.NullString
	reasoning, reasoningState                      sql.NullString
	created                                        sql.NullTime
}

func (ns *nullMessage) apply(m *ChatMessage) {
	m.Content, m.Name, m.ToolCallID, m.ToolCalls, m.Metadata = ns.content.String, ns.name.String, ns.toolCallID.String, ns.toolCalls.String, ns.metadata.String
	m.Reasoning, m.ReasoningState = ns.reasoning.String, ns.reasoningState.String
	m.CreatedAt = ns.created.Time
}

// messageArgs are m's values in messageColumns' order.
func messageArgs(m *ChatMessage) []any {
	return []any{m.ID, m.SessionID, m.TurnID, m.TurnSeq, m.Idx, m.Role, m.Content, m.Name, m.ToolCallID, m.ToolCalls,
		m.Metadata, m.Committed, m.Aside, m.Sub, m.CreatedAt, m.Reasoning, m.ReasoningState, m.ModelContext}
}

// scanMessages reads every row of rows (messageColumns, then extra columns into extra's
// pointers, fresh for each row) and closes rows.
func scanMessages(rows *sql.Rows, each func(m ChatMessage)) error {
	defer rows.Close()
	for rows.Next() {
		var m ChatMessage
		var ns nullMessage
		if err := rows.Scan(messageFields(&m, &ns)...); err != nil {
			return err
		}
		ns.apply(&m)
		each(m)
	}
	return rows.Err()
}
