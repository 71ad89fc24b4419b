// Package models holds the GORM models and repositories of the copilot's own database: chat
// sessions with their messages and turns, approvals and the configuration jobs they gate, the
// device-command records that are the audit, LLM model configurations, MCP calls, exercises,
// per-user limits and topology marks. It works on SQLite (the default) and PostgreSQL; every
// schema change goes through Migrate so both stay alike.
package models

import (
	"errors"
	"time"
)

// ChatSession is the chat_sessions row of GNS3's chat API. ThreadID is the session id clients see.
// idx_user_project and idx_pinned_updated are the indexes the chat API names; idx_session_list
// (user, project, pinned, updated_at, id) is the one the session list reads in its order, a page
// of a user's 10,000 sessions without sorting them.
type ChatSession struct {
	ID            uint   `gorm:"primaryKey;autoIncrement;index:idx_session_list,priority:5" json:"id"`
	ThreadID      string `gorm:"size:64;not null;uniqueIndex:idx_thread_id" json:"thread_id"`
	UserID        string `gorm:"size:64;not null;index:idx_user_project,priority:1;index:idx_session_list,priority:1" json:"user_id"`
	ProjectID     string `gorm:"size:64;not null;index:idx_user_project,priority:2;index:idx_session_list,priority:2" json:"project_id"`
	Title         string `gorm:"size:255;not null;default:'New Conversation'" json:"title"`
	MessageCount  int64  `gorm:"not null;default:0" json:"message_count"`
	LLMCallsCount int64  `gorm:"column:llm_calls_count;not null;default:0" json:"llm_calls_count"`
	InputTokens   int64  `gorm:"not null;default:0" json:"input_tokens"`
	OutputTokens  int64  `gorm:"not null;default:0" json:"output_tokens"`
	TotalTokens   int64  `gorm:"not null;default:0" json:"total_tokens"`
	// ReasoningTokens is the part of OutputTokens thinking models spent reasoning, where their
	// providers report it; OutputTokens and TotalTokens include it.
	ReasoningTokens int64 `gorm:"not null;default:0" json:"reasoning_tokens"`
	// CachedTokens is the part of InputTokens the providers' prompt caches served, as they
	// reported it.
	CachedTokens  int64      `gorm:"not null;default:0" json:"cached_tokens"`
	LastMessageAt *time.Time `json:"last_message_at"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `gorm:"index:idx_pinned_updated,priority:2,sort:desc;index:idx_session_list,priority:4" json:"updated_at"`
	Metadata      string     `gorm:"column:metadata;type:text;not null;default:'{}'" json:"-"`
	Stats         string     `gorm:"type:text;not null;default:'{}'" json:"-"`
	Pinned        bool       `gorm:"not null;default:false;index:idx_pinned_updated,priority:1,sort:desc;index:idx_session_list,priority:3" json:"pinned"`
	// TitleLocked is set when the user renames the session, so an automatic title never
	// overwrites a name a person chose.
	TitleLocked bool `gorm:"not null;default:false" json:"-"`
}

// ChatTurn is one user message and everything the copilot did to answer it: one ChatTurn workflow.
type ChatTurn struct {
	ID        string `gorm:"primaryKey;size:64"`
	SessionID string `gorm:"size:64;not null;index"`
	Seq       int    `gorm:"not null"`
	UserID    string `gorm:"size:64;not null"`
	ProjectID string `gorm:"size:64;not null"`
	Status    string `gorm:"size:16;not null"`
	Mode      string `gorm:"size:64;not null"`
	// LLMConfigID is the configuration chosen when the turn started ("" = server default).
	LLMConfigID string `gorm:"size:64;not null;default:''"`
	WorkflowID  string `gorm:"size:200;not null"`
	Error       string `gorm:"type:text"`
	// Temperature is the request's override, nil when the stored configuration applies.
	Temperature *float64
	CreatedAt   time.Time
	FinishedAt  *time.Time
}

// ChatMessage is one OpenAI-shaped message of a session's transcript. Messages of a running
// turn are staged (Committed false) and become part of the transcript when the turn finalizes.
type ChatMessage struct {
	ID         string `gorm:"primaryKey;size:64"`
	SessionID  string `gorm:"size:64;not null;index:idx_msg_order,priority:1"`
	TurnID     string `gorm:"size:64;not null;index"`
	TurnSeq    int    `gorm:"not null;index:idx_msg_order,priority:2"`
	Idx        int    `gorm:"not null;index:idx_msg_order,priority:3"`
	Role       string `gorm:"size:16;not null"`
	Content    string `gorm:"type:text;not null;default:''"`
	Name       string `gorm:"size:200"`
	ToolCallID string `gorm:"size:200"`
	// ToolCalls is the JSON array of OpenAI tool calls of an assistant message ("" when none).
	ToolCalls string `gorm:"type:text"`
	Metadata  string `gorm:"type:text"`
	// Reasoning is what a thinking model wrote before this assistant message, as a person may
	// read it ("" when none). It is never part of Content.
	Reasoning string `gorm:"type:text"`
	// ReasoningState is what the provider needs back with this message on later calls (its
	// reasoning fields, signatures, encrypted details) and who produced it, as JSON owned by
	// internal/llm ("" when none). Only the model that made it is ever sent it.
	ReasoningState string `gorm:"type:text"`
	Committed      bool   `gorm:"not null;default:false"`
	// Aside marks a message of the conversation that is not part of the model's exchange: an
	// approval's question and the person's answer. The history shows it; the model never sees
	// it, since its request must keep each assistant's tool calls next to their results (it
	// reads the decision in the result). Sub places it among the messages of its Idx: the
	// question before the call's result (-1), the answer after it (1). GNS3's panel folds a
	// result into the assistant message before it, so the result's card lands on the question
	// and the answer follows both.
	Aside bool `gorm:"not null;default:false"`
	Sub   int  `gorm:"not null;default:0"`
	// ModelContext marks the opposite of an aside: a message the model reads and people do not,
	// such as the lab as the copilot showed it to the model (the project when the model first saw
	// it, then what changed). It sits before the assistant message of its Idx (Sub -1) and is
	// stored so that every later request shows the model exactly the text it was shown before
	// (a prefix cache then reuses the request). The history, the export and the message count
	// leave it out; internal/llm decides how it goes on the wire.
	ModelContext bool `gorm:"not null;default:false"`
	CreatedAt    time.Time
}

// Repository errors the API maps to HTTP statuses.
var (
	ErrNotFound    = errors.New("not found")
	ErrTurnRunning = errors.New("a turn is already running in this session")
)

// ClientTimeLayout is how times are written for clients: RFC 3339 in UTC with the offset spelled
// "+00:00", never a bare "Z". GNS3's web UI counts a time as zoned only when it ends in ±hh:mm
// and appends "Z" to any other, so "…Z" would become "…ZZ", shown as "Invalid Date".
const ClientTimeLayout = "2006-01-02T15:04:05.999999-07:00"

// ClientTime writes t for clients (ClientTimeLayout).
func ClientTime(t time.Time) string { return t.UTC().Format(ClientTimeLayout) }
