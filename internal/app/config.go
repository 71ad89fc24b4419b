// Package app assembles the copilot's parts into a running process: the database, the
// event log, the credential store, Temporal (its own dev server when none is given), the worker
// and the HTTP API. cmd/gns3-copilot parses flags into a Config and calls Run; end-to-end tests
// call Start to run the same assembly in-process.
package app

import (
	"io"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
)

// Role says which halves this process runs.
type Role int

// The roles of `serve`, `api` and `worker`.
const (
	RoleServe Role = iota
	RoleAPI
	RoleWorker
)

// Config is every setting of the service; cmd/gns3-copilot documents the flags and variables.
type Config struct {
	Listen            string
	DataDir           string
	GNS3URL           string
	GNS3Timeout       time.Duration
	TemporalAddress   string
	TemporalNamespace string
	TemporalCLI       string
	TemporalPort      int
	TemporalUIPort    int
	RedisURL          string
	DatabaseURL       string
	SecretKey         string
	LLMProvider       string
	LLMBaseURL        string
	LLMModel          string
	LLMAPIKey         string
	LLMContextLimitK  int
	// LLMIdleTimeout is how long a model's stream may send nothing at all (no data, reasoning or
	// keep-alive) before the call is taken for stalled and retried (0: llm.DefaultIdleTimeout).
	LLMIdleTimeout time.Duration
	// LLMReasoningEffort is how much the server default model thinks (llmconfig.Efforts), ""
	// for its provider's default.
	LLMReasoningEffort string
	CopilotMode        string
	ForbiddenCommands  string
	SkillsDir          string
	DeviceConcurrency  int
	// MaxOpenConsoles bounds the device consoles the worker holds open at once, across every
	// tool call and job (0: no limit).
	MaxOpenConsoles int
	// DeviceUsername and DevicePassword answer a console's login (a Linux VM's "login:"); the
	// user name is also the SSH consoles' user.
	DeviceUsername, DevicePassword string
	// Approval and ApprovalTimeout: which tool calls wait for the session owner, and how long.
	Approval        string
	ApprovalTimeout time.Duration
	// ExerciseTTL is how long a fault-injection exercise stays open (0: 7 days).
	ExerciseTTL time.Duration
	EventTTL    time.Duration
	LogLevel    string
	CORSOrigins []string
	// LLMAllowHosts (host names, CIDRs, "*") widens what regular users' LLM configurations may
	// reach beyond public addresses; LLMAllowlistOnly narrows it to that list alone.
	LLMAllowHosts    []string
	LLMAllowlistOnly bool
	// LLMResolver resolves the host names of regular users' LLM endpoints; nil uses the
	// system's (tests give one that maps a name to loopback).
	LLMResolver egress.Resolver
	// Per-user turn limits; zero is no limit (the flags set the defaults). LimitSuperadmins
	// applies them to GNS3 superadmins too.
	MaxTurnsPerUser  int
	TurnsPerMinute   int
	DailyTokenBudget int64
	LimitSuperadmins bool
	// MCPMaxCallsPerUser bounds one user's MCP tool calls running at once (0: no limit).
	MCPMaxCallsPerUser int
	// MCPElicitTimeout is how long an approval asked by elicitation waits before the MCP call
	// answers with its plan instead (0: mcp.DefaultElicitTimeout).
	MCPElicitTimeout time.Duration
	// MCPAllowedOrigins are the browser origins /mcp accepts besides the copilot's own ("*":
	// any); requests without Origin are always accepted.
	MCPAllowedOrigins []string
	// ProxyGNS3 puts the copilot in front of GNS3: what is not the copilot's own is forwarded
	// to GNS3URL, so GNS3's web UI and its AI chat panel work at the copilot's address.
	ProxyGNS3 bool
	// LogFormat is "text" (the default) or "json".
	LogFormat string
	// LogOutput receives the log; nil is standard error (tests capture it).
	LogOutput io.Writer
	// MetricsListen serves /metrics on an address of its own instead of the API's; a worker,
	// which has no API, serves it there or else on Listen.
	MetricsListen string
	// PprofListen serves Go's /debug/pprof/ profiles on an address of its own (off by default:
	// profiles show what the process is doing to whoever can reach them).
	PprofListen string
	// MaxConcurrentActivities bounds the activities one worker runs at once, and as many local
	// activities (model calls) (0: the SDK's defaults).
	MaxConcurrentActivities int
	// MemoryLimit is the Go runtime's soft memory limit in bytes (runtime/debug.SetMemoryLimit);
	// 0 is none. Run sets it for the whole process; Start leaves the process's limit alone.
	MemoryLimit int64
	// TemporalMemoryLimit is the soft memory limit in bytes of the dev server serve starts
	// (temporaldev.Options.MemoryLimit); 0 leaves it the environment this process has.
	TemporalMemoryLimit int64
	// Heartbeat overrides the SSE heartbeat interval (tests shorten it).
	Heartbeat time.Duration
	// NoLiveTopology reads GNS3 per request instead of keeping a live topology (package livetopo).
	NoLiveTopology bool
	// CheckCacheTTL is how long a checked token, a user's project access and a user's groups are
	// trusted before GNS3 is asked again (0: 30 s). Benchmarks shorten it to measure the first
	// message after a pause.
	CheckCacheTTL time.Duration
}

func (c Config) checkCacheTTL() time.Duration {
	if c.CheckCacheTTL > 0 {
		return c.CheckCacheTTL
	}
	return 30 * time.Second
}
