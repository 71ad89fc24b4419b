// Package api is the copilot's HTTP surface: the chat API of GNS3's own copilot under both GNS3
// prefixes, the SSE relay of a turn's events, approvals, exercises, skills, LLM model
// configuration routes and the embedded chat page, with every route of the process mounted in
// routes.go (the MCP front door and the GNS3 proxy included). Callers are authenticated by
// package auth; turns are Temporal workflows that the API starts (package durable), cancels and
// tails, and never runs itself.
//
// "GNS3's chat API", in comments here and in relay, tools and models, means the two documents
// that specify what GNS3's web UI expects of its copilot: its AI chat API design (routes, request
// and session shapes, the SSE event types content, tool_call, tool_start, tool_end, error, done
// and heartbeat) and its tool response format standard. They are the contract with that client's
// AI panel: additions are allowed, renames and removals are not (ARCHITECTURE.md).
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// TurnRunner starts and cancels ChatTurn workflows.
type TurnRunner interface {
	StartTurn(ctx context.Context, workflowID string, in workflows.ChatTurnInput, d durable.TurnDescription) error
	CancelTurn(ctx context.Context, workflowID string) error
	// TurnEnded reports whether the workflow has ended, and whether it ever started.
	TurnEnded(ctx context.Context, workflowID string) (ended, started bool, err error)
}

// CredentialStore keeps a turn's GNS3 token worker-side for as long as the turn may run.
type CredentialStore interface {
	Put(ctx context.Context, key, secret string, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
}

// LLMChooser decides, when a turn starts, which LLM configuration it runs with. It may ask GNS3
// (with the caller's client) for the user's groups.
type LLMChooser interface {
	Choose(ctx context.Context, userID string, client *gns3.Client) (llmconfig.Settings, error)
}

// groupsWarmer is an LLMChooser that can read a user's groups ahead of Choose (llmconfig.Store):
// the API asks for them while it checks the token and the project of a new message.
type groupsWarmer interface {
	WarmGroups(ctx context.Context, userID string, client *gns3.Client)
}

// Deps is everything the API needs; service builds it.
type Deps struct {
	Repo        *models.ChatRepository
	GNS3        *gns3.Server
	Events      relay.Log
	Turns       TurnRunner
	Credentials CredentialStore
	LLM         LLMChooser
	Logger      *slog.Logger
	// Web serves the chat page at / when set.
	Web http.Handler
	// LLMConfigs serves the LLM model configuration routes when set.
	LLMConfigs *llmconfig.Store
	// Metrics records request and turn metrics (nil records nothing); MetricsHandler, when set,
	// is served at /metrics (unset when --metrics-listen moves it to an address of its own).
	Metrics        *metrics.Metrics
	MetricsHandler http.Handler

	Heartbeat time.Duration // SSE heartbeat when nothing else is sent; default 15 s
	// WriteTimeout bounds how long a burst of SSE frames may wait for a client that does not
	// read; the stream is dropped after it. Default 30 s.
	WriteTimeout    time.Duration
	MaxMessageBytes int           // longest accepted chat message; default 32 KiB
	UserCacheTTL    time.Duration // how long a checked token is trusted; default 30 s
	// CORSOrigins are the browser origins (e.g. the GNS3 web UI's) allowed to call the API;
	// "*" allows any.
	CORSOrigins []string
	// Work is how a turn runs: approvals, device concurrency, how long it may act for its user.
	Work durable.Settings
	// Limits are the per-user turn limits (concurrency, rate, daily tokens).
	Limits TurnLimits
	// GNS3Proxy, when set, receives every request that is not the copilot's own (package
	// gns3proxy): the copilot then fronts GNS3 at one address, and its page moves to
	// gns3proxy.CopilotPagePath.
	GNS3Proxy http.Handler
	// Live is the live topology (nil: every check reads GNS3, and no topology stream).
	Live LiveTopology
	// Exercises serves fault-injection exercises (/chat/inject and the exercise routes); nil
	// leaves them out.
	Exercises *Exercises
	// Approvals serves the approval and configuration-job routes, lets a chat message answer an
	// approval, and gives the session export its approvals; nil leaves all that out.
	Approvals *Approvals
	// Skills serves the superadmin's view and reload of the skills; nil leaves them out.
	Skills *skills.Store
	// MCP serves the Model Context Protocol front door at /mcp (package mcp); nil leaves it out.
	MCP gin.HandlerFunc
	// MCPOrigin checks a request's Origin before /mcp authenticates it (mcp.OriginGuard); nil
	// checks nothing.
	MCPOrigin gin.HandlerFunc
}

// Server is the gin engine with its dependencies.
type Server struct {
	deps Deps
	log  *slog.Logger
	// requireUser authenticates the caller (auth.Authenticator.RequireUser), reading ahead what
	// the route needs while the token is checked.
	requireUser gin.HandlerFunc
	launcher    *durable.Launcher
	engine      *gin.Engine
	// replies decides approvals answered by a chat message; nil without Deps.Approvals.
	replies *approvalAPI
}

// New builds the server and its routes.
func New(d Deps) *Server {
	if d.Heartbeat <= 0 {
		d.Heartbeat = 15 * time.Second
	}
	if d.WriteTimeout <= 0 {
		d.WriteTimeout = 30 * time.Second
	}
	if d.MaxMessageBytes <= 0 {
		d.MaxMessageBytes = 32 << 10
	}
	d.Work = d.Work.WithDefaults()
	if d.UserCacheTTL <= 0 {
		d.UserCacheTTL = 30 * time.Second
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	gin.SetMode(gin.ReleaseMode)
	s := &Server{deps: d, log: d.Logger}
	s.requireUser = auth.New(d.GNS3, d.UserCacheTTL, s.prefetchProjectCheck, s.prefetchGroups).RequireUser
	s.launcher = &durable.Launcher{Credentials: d.Credentials, Workflows: d.Turns, TTL: d.Work.CredentialTTL,
		Grace: durable.StaleGrace, Log: d.Logger}
	if d.Approvals != nil {
		s.replies = &approvalAPI{s: s, Approvals: d.Approvals}
	}
	s.engine = gin.New()
	if d.GNS3Proxy != nil {
		// GNS3 gets the path exactly as the browser sent it.
		s.engine.RedirectTrailingSlash = false
	}
	s.engine.Use(s.requestLog, gin.Recovery())
	if len(d.CORSOrigins) > 0 {
		s.engine.Use(s.corsMiddleware())
	}
	s.routes(s.engine)
	return s
}

// Handler is the http.Handler to serve.
func (s *Server) Handler() http.Handler { return s.engine }
