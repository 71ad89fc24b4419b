// Package mcp is the copilot's Model Context Protocol front door: Streamable HTTP at /mcp on the
// API's gin engine, for agents people already use (desktop assistants, IDE agents, scripts).
// It offers the chat's own tool catalogue, schemas and mode rules, authenticates like the chat
// API, and runs every lab tool call as an MCPCall workflow that reuses the chat's tool and
// device activities, so approvals, the forbidden-command list, one writer per console, the
// audit and crash recovery hold for MCP clients too.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/durable"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/livetopo"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// Path is where the endpoint is mounted.
const Path = "/mcp"

// LiveTopology is what the front door reads of the live topology (package livetopo): the
// project for access checks, the snapshot for the topology resource, and its changes for
// subscribers.
type LiveTopology interface {
	Read(ctx context.Context, c *gns3.Client, projectID string) (*livetopo.Snapshot, error)
	CheckAccess(ctx context.Context, c *gns3.Client, projectID string) (*gns3.Project, error)
	Project(ctx context.Context, c *gns3.Client, projectID string) (*gns3.Project, error)
	Hold(projectID string) (release func())
	Changes(projectID string, since uint64) ([]livetopo.Change, uint64, <-chan struct{}, bool)
}

// CredentialStore keeps a call's GNS3 token worker-side while the call runs.
type CredentialStore interface {
	Put(ctx context.Context, key, secret string, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
}

// Workflows is what the front door asks of Temporal (durable.Temporal).
type Workflows interface {
	StartMCPCall(ctx context.Context, workflowID string, in workflows.MCPCallInput, username, clientName string) error
	TurnEnded(ctx context.Context, workflowID string) (ended, started bool, err error)
	DecideApproval(ctx context.Context, workflowID string, d workflows.ApprovalDecision) (workflows.ApprovalOutcome, error)
	Wait(ctx context.Context, workflowID string) error
}

// LLMChooser tells a user's LLM configuration, whose copilot mode bounds their MCP sessions
// (llmconfig.Store).
type LLMChooser interface {
	Choose(ctx context.Context, userID string, client *gns3.Client) (llmconfig.Settings, error)
}

// Deps is what the front door needs; service builds it.
type Deps struct {
	Workflows Workflows
	Calls     models.MCPCallRepository
	// Approvals are read to hand a decision asked by elicitation to the workflow that waits.
	Approvals   models.ApprovalRepository
	Events      relay.Log
	Credentials CredentialStore
	Tools       *tools.Registry
	// LLM tells the user's configured copilot mode, the highest an MCP session may use;
	// DefaultMode (--copilot-mode) stands in for a user with no LLM configuration.
	LLM         LLMChooser
	DefaultMode string
	// Live is the live topology; nil reads GNS3 for every check and resource read, and offers
	// no change notifications.
	Live LiveTopology
	// Work is the chat's settings of approvals, device concurrency and credential lifetime,
	// which MCP calls follow too.
	Work durable.Settings
	// MaxCallsPerUser bounds one user's MCP calls running at once; 0 is no limit.
	MaxCallsPerUser int
	// SessionTimeout closes MCP sessions idle this long (default 1 h).
	SessionTimeout time.Duration
	// ElicitTimeout is how long an approval asked by elicitation waits for the client's user
	// before the call answers with its plan instead (default DefaultElicitTimeout).
	ElicitTimeout time.Duration
	Logger        *slog.Logger
	// Version is what the server reports as its version on initialize.
	Version string
}

// Handler serves /mcp (POST, GET and DELETE, as Streamable HTTP uses them); api's routes mount
// it behind the chat API's own authentication (auth.Authenticator.RequireUser).
func Handler(d Deps) gin.HandlerFunc { return newFrontDoor(d).serve }

// protocolVersions are the session-based protocol versions. The sessionless 2026-07-28
// protocol is left out: the mode chosen on initialize, the session's binding to its user and
// resource subscriptions all live in a session. Clients that prefer it fall back to one of these.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

type frontDoor struct {
	d        Deps
	launcher *durable.Launcher
	log      *slog.Logger
	handler  *sdk.StreamableHTTPHandler
	// versionOnly answers the SDK's protocol-version check of requests that do not open a
	// session; it has no features.
	versionOnly *sdk.Server
}

func newFrontDoor(d Deps) *frontDoor {
	d.Work = d.Work.WithDefaults()
	if d.SessionTimeout <= 0 {
		d.SessionTimeout = time.Hour
	}
	if d.ElicitTimeout <= 0 {
		d.ElicitTimeout = DefaultElicitTimeout
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	f := &frontDoor{d: d, log: d.Logger.With("component", "mcp")}
	// No grace: the list of running calls is asked for only when the user is at the limit, and
	// a call whose workflow does not exist then stops counting at once.
	f.launcher = &durable.Launcher{Credentials: d.Credentials, Workflows: d.Workflows, TTL: d.Work.CredentialTTL, Log: f.log}
	f.versionOnly = sdk.NewServer(f.implementation(), &sdk.ServerOptions{SupportedProtocolVersions: protocolVersions})
	f.handler = sdk.NewStreamableHTTPHandler(f.getServer, &sdk.StreamableHTTPOptions{SessionTimeout: d.SessionTimeout})
	return f
}

func (f *frontDoor) implementation() *sdk.Implementation {
	return &sdk.Implementation{Name: "gns3-copilot", Title: "GNS3 Copilot", Version: f.d.Version}
}

// sessionSettings are fixed when a session opens: who, from which client, in which mode.
type sessionSettings struct {
	userID   string
	username string
	mode     tools.Mode
	client   string
}

// sessionSlot carries a new session's settings from the gin handler to getServer through the
// request's context, and the server built for it (the SDK asks twice per initialize).
type sessionSlot struct {
	settings sessionSettings
	server   *sdk.Server
}

type slotKey struct{}

func (f *frontDoor) getServer(req *http.Request) *sdk.Server {
	slot, _ := req.Context().Value(slotKey{}).(*sessionSlot)
	if slot == nil {
		return f.versionOnly
	}
	if slot.server == nil {
		slot.server = f.newSessionServer(slot.settings)
	}
	return slot.server
}

// callerKey is where the caller travels to tool handlers: inside the SDK's TokenInfo, which it
// also uses to refuse a session's requests from any other user.
const callerKey = "gns3copilot.caller"

func (f *frontDoor) serve(c *gin.Context) {
	caller := *auth.CallerOf(c)
	req := c.Request
	if req.Method == http.MethodPost && req.Header.Get("Mcp-Session-Id") == "" {
		init, err := peekInitialize(req)
		if err != nil {
			respond.Error(c, http.StatusBadRequest, err.Error())
			return
		}
		if init != nil {
			if init.Params.Mode == "" && init.Params.Meta["mode"] == nil {
				init.Params.Mode = req.URL.Query().Get("mode")
			}
			settings, status, msg := f.settingsFor(c.Request.Context(), caller, init)
			if status != 0 {
				respond.Error(c, status, msg)
				return
			}
			req = req.WithContext(context.WithValue(req.Context(), slotKey{}, &sessionSlot{settings: settings}))
		} else {
			req = req.WithContext(context.WithValue(req.Context(), slotKey{}, &sessionSlot{settings: sessionSettings{
				userID: caller.ID, username: caller.Username, mode: tools.TeachingAssistant}}))
		}
	}
	verify := func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) {
		// The token was checked against GNS3 by RequireUser just now; the expiry only satisfies
		// the SDK, which re-reads it on every request.
		return &sdkauth.TokenInfo{UserID: caller.ID, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{callerKey: caller}}, nil
	}
	sdkauth.RequireBearerToken(verify, nil)(f.handler).ServeHTTP(c.Writer, req)
}

// initializeRequest is the part of an initialize request the front door reads before the SDK:
// the client's name and the mode it asks for.
type initializeRequest struct {
	Method string `json:"method"`
	Params struct {
		Meta       map[string]any `json:"_meta"`
		Mode       string         `json:"mode"`
		ClientInfo struct {
			Name string `json:"name"`
		} `json:"clientInfo"`
	} `json:"params"`
}

// peekInitialize reads an initialize request's body and puts it back for the SDK; nil for any
// other request.
func peekInitialize(req *http.Request) (*initializeRequest, error) {
	if req.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, sdk.DefaultMaxRequestBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the request: %v", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	var m initializeRequest
	if json.Unmarshal(body, &m) != nil || m.Method != "initialize" {
		return nil, nil
	}
	return &m, nil
}

// modeRank orders the modes by what they allow.
var modeRank = map[tools.Mode]int{tools.TeachingAssistant: 0, tools.LabAutomation: 1}

// settingsFor decides a new session's mode: the one the client asks for (initialize's
// params.mode or params._meta.mode, or ?mode= on the URL), never above the user's configured
// mode, which is the default.
func (f *frontDoor) settingsFor(ctx context.Context, caller auth.Caller, init *initializeRequest) (sessionSettings, int, string) {
	allowed := tools.TeachingAssistant
	if m, err := tools.ParseMode(f.d.DefaultMode); err == nil {
		allowed = m
	}
	if f.d.LLM != nil {
		settings, err := f.d.LLM.Choose(ctx, caller.ID, caller.GNS3)
		var bad *llmconfig.BadConfigError
		switch {
		case err == nil:
			if m, perr := tools.ParseMode(settings.CopilotMode); perr == nil {
				allowed = m
			}
		case errors.Is(err, llmconfig.ErrNotConfigured), errors.As(err, &bad):
			// No model configured: the tools still work, in the default mode.
		default:
			f.log.Warn("reading the user's copilot mode", "user", caller.ID, "error", err)
			return sessionSettings{}, http.StatusBadGateway, "Reading your copilot mode failed; try again in a moment."
		}
	}
	asked := init.Params.Mode
	if asked == "" {
		if s, ok := init.Params.Meta["mode"].(string); ok {
			asked = s
		}
	}
	mode := allowed
	if asked != "" {
		m, err := tools.ParseMode(asked)
		if err != nil {
			return sessionSettings{}, http.StatusUnprocessableEntity, err.Error()
		}
		if tools.IsPrivateMode(string(m)) {
			// Breaking the lab for an exercise is started by the chat's inject route only, which
			// keeps what it did from the student; over MCP it would be a way past the mode ceiling.
			return sessionSettings{}, http.StatusUnprocessableEntity, fmt.Sprintf("Mode %s is started by POST …/chat/inject only; ask for %s or leave mode out.", m, allowed)
		}
		if modeRank[m] > modeRank[allowed] {
			return sessionSettings{}, http.StatusForbidden, fmt.Sprintf("Mode %s is above what you may use (%s); ask for %s or leave mode out.", m, allowed, allowed)
		}
		mode = m
	}
	return sessionSettings{userID: caller.ID, username: caller.Username, mode: mode, client: clientName(init.Params.ClientInfo.Name)}, 0, ""
}

// clientName is the client's name as the audit shows it: printable, bounded, never empty.
func clientName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(name))
	if name == "" {
		return "unnamed-client"
	}
	for len(name) > 100 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// callerOf is the caller of one MCP request.
func callerOf(extra *sdk.RequestExtra) (auth.Caller, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return auth.Caller{}, false
	}
	c, ok := extra.TokenInfo.Extra[callerKey].(auth.Caller)
	return c, ok
}
