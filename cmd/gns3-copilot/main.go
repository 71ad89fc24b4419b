// Command gns3-copilot runs the GNS3 copilot: `serve` runs the API and a worker in one process
// (starting its own Temporal dev server unless given one), `api` and `worker` run the halves
// separately for scaling out, `doctor` checks a configuration before the first chat, `prune`
// removes old transcripts, and `version` says what was built. Every flag also reads an
// environment variable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/llm"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
)

const usage = `gns3-copilot — an AI copilot for GNS3 labs

Usage:
  gns3-copilot serve  [flags]   API + worker in one process (default; starts a Temporal dev server itself)
  gns3-copilot api    [flags]   the HTTP API only (needs --temporal-address and --redis-url)
  gns3-copilot worker [flags]   the Temporal worker only (needs --temporal-address and --redis-url)
  gns3-copilot doctor [flags]   check GNS3, the data directory, Temporal, Redis, PostgreSQL and the
                                model with serve's flags and environment; changes nothing
  gns3-copilot prune --before DATE [--apply] [--include-audit]
                                remove the transcripts of sessions idle since before DATE (a dry
                                run without --apply); approvals and exercise records stay
                                unless --include-audit
  gns3-copilot version          version, commit, build time, Go and Temporal CLI versions (also --version)
  gns3-copilot help             this text (also -h)

Run "gns3-copilot <command> -h" for the flags; each flag has an environment variable.
`

func main() {
	args := os.Args[1:]
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 {
		// Only these two: any other leading flag belongs to the default command, serve.
		switch args[0] {
		case "-h", "-help", "--help":
			cmd = "help"
		case "-version", "--version":
			cmd = "version"
		}
	}
	var role app.Role
	switch cmd {
	case "help":
		fmt.Print(usage)
		return
	case "version":
		fmt.Print(readVersion().String())
		return
	case "prune":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runPrune(ctx, args, os.Stdout, os.Stderr, time.Now())
		stop()
		os.Exit(code)
	case "serve", "doctor":
		role = app.RoleServe
	case "api":
		role = app.RoleAPI
	case "worker":
		role = app.RoleWorker
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	cfg, login, err := parseCommand(cmd, args)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gns3-copilot:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cmd == "doctor" {
		if !app.Doctor(ctx, cfg, login, os.Stdout) {
			os.Exit(1)
		}
		return
	}
	if err := app.Run(ctx, role, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "gns3-copilot:", err)
		os.Exit(1)
	}
}

func parseConfig(cmd string, args []string) (app.Config, error) {
	c, _, err := parseCommand(cmd, args)
	return c, err
}

// parseCommand parses a command's flags: serve's, and for doctor also the GNS3 login it tries.
func parseCommand(cmd string, args []string) (app.Config, app.GNS3Login, error) {
	fs, c, finish := newFlagSet(cmd)
	var login app.GNS3Login
	if cmd == "doctor" {
		fs.StringVar(&login.User, "gns3-user", envString("GNS3_COPILOT_GNS3_USER", ""),
			"GNS3 user to log in as, with the password from GNS3_COPILOT_GNS3_PASSWORD (env GNS3_COPILOT_GNS3_USER)")
		// Environment only, like the model's key: a flag would show in ps.
		login.Password = os.Getenv("GNS3_COPILOT_GNS3_PASSWORD")
		login.Token = os.Getenv("GNS3_COPILOT_GNS3_TOKEN")
	}
	if err := fs.Parse(args); err != nil {
		return *c, login, err
	}
	if err := finish(); err != nil {
		return *c, login, err
	}
	if fs.NArg() > 0 {
		return *c, login, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return *c, login, nil
}

// newFlagSet defines every flag (each with its environment variable, which sets the default)
// into the returned Config, which finish completes after parsing; docs/configuration.md's
// table is checked against the flag set.
func newFlagSet(cmd string) (*flag.FlagSet, *app.Config, func() error) {
	var c app.Config
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	str := func(p *string, name, env, def, help string) {
		fs.StringVar(p, name, envString(env, def), help+" (env "+env+")")
	}
	num := func(p *int, name, env string, def int, help string) {
		fs.IntVar(p, name, envInt(env, def), help+" (env "+env+")")
	}
	dur := func(p *time.Duration, name, env string, def time.Duration, help string) {
		fs.DurationVar(p, name, envDuration(env, def), help+" (env "+env+")")
	}
	str(&c.Listen, "listen", "GNS3_COPILOT_LISTEN", "127.0.0.1:8088", "address the API listens on")
	str(&c.DataDir, "data-dir", "GNS3_COPILOT_DATA_DIR", "./data", "directory for the SQLite database, the secret key and the Temporal dev server's database")
	str(&c.GNS3URL, "gns3-url", "GNS3_COPILOT_GNS3_URL", "http://127.0.0.1:3080", "GNS3 controller base URL")
	dur(&c.GNS3Timeout, "gns3-timeout", "GNS3_COPILOT_GNS3_TIMEOUT", 15*time.Second, "timeout of one GNS3 API request")
	str(&c.TemporalAddress, "temporal-address", "GNS3_COPILOT_TEMPORAL_ADDRESS", "", "Temporal frontend host:port; empty starts a local dev server (serve only)")
	str(&c.TemporalNamespace, "temporal-namespace", "GNS3_COPILOT_TEMPORAL_NAMESPACE", "default", "Temporal namespace")
	str(&c.TemporalCLI, "temporal-cli", "GNS3_COPILOT_TEMPORAL_CLI", "", "path of the binary that runs the dev server: gns3-copilot-temporal or the temporal CLI (default: gns3-copilot-temporal, then temporal, on PATH, then in $GOBIN, $GOPATH/bin and where `go env GOPATH` says)")
	num(&c.TemporalPort, "temporal-port", "GNS3_COPILOT_TEMPORAL_PORT", 0, "port of the dev server (0 picks a free one)")
	num(&c.TemporalUIPort, "temporal-ui-port", "GNS3_COPILOT_TEMPORAL_UI_PORT", 0, "port of the dev server's Web UI (0: 8233 when free, else any free port; -1 disables it)")
	str(&c.RedisURL, "redis-url", "GNS3_COPILOT_REDIS_URL", "", "Redis URL (redis://host:6379/0) for the event relay, credentials and device locks; empty keeps them in-process")
	str(&c.DatabaseURL, "database-url", "GNS3_COPILOT_DATABASE_URL", "", "postgres:// URL; empty uses SQLite in the data directory")
	str(&c.SecretKey, "secret-key", "GNS3_COPILOT_SECRET_KEY", "", "32-byte key (base64 or hex) that encrypts API keys and turn credentials; empty uses <data-dir>/secret.key, created on first start")
	str(&c.LLMProvider, "llm-provider", "GNS3_COPILOT_LLM_PROVIDER", "openai", "server default LLM provider (openai, azure, deepseek, openrouter, ollama, lmstudio, vllm, litellm, custom)")
	str(&c.LLMBaseURL, "llm-base-url", "GNS3_COPILOT_LLM_BASE_URL", "", "server default LLM base URL (OpenAI-compatible, e.g. https://api.openai.com/v1)")
	str(&c.LLMModel, "llm-model", "GNS3_COPILOT_LLM_MODEL", "", "server default model name")
	c.LLMAPIKey = os.Getenv("GNS3_COPILOT_LLM_API_KEY") // environment only: flags show up in ps
	num(&c.LLMContextLimitK, "llm-context-limit", "GNS3_COPILOT_LLM_CONTEXT_LIMIT", 128, "server default model's context window, in thousands of tokens")
	str(&c.LLMReasoningEffort, "llm-reasoning-effort", "GNS3_COPILOT_LLM_REASONING_EFFORT", "", "how much the server default model thinks before it answers: off, low, medium, high or max, said in its provider's own words (empty: the provider's default)")
	dur(&c.LLMIdleTimeout, "llm-idle-timeout", "GNS3_COPILOT_LLM_IDLE_TIMEOUT", llm.DefaultIdleTimeout, "how long a model's stream may send nothing at all (no answer, no reasoning, no keep-alive) before the call is taken for stalled and retried; a model that streams its thinking is never cut off")
	str(&c.CopilotMode, "copilot-mode", "GNS3_COPILOT_MODE", domain.ModeTeachingAssistant, "server default mode: teaching_assistant or lab_automation_assistant")
	str(&c.ForbiddenCommands, "forbidden-commands", "GNS3_COPILOT_FORBIDDEN_COMMANDS", "", "file of extra forbidden device commands, one per line")
	str(&c.SkillsDir, "skills-dir", "GNS3_COPILOT_SKILLS_DIR", "", "directory of skills (prompts per mode, title prompt, forbidden commands, injection recipes) overriding the built-in ones")
	num(&c.DeviceConcurrency, "device-concurrency", "GNS3_COPILOT_DEVICE_CONCURRENCY", 256, "devices one tool call talks to at once")
	str(&c.DeviceUsername, "device-username", "GNS3_COPILOT_DEVICE_USERNAME", "", "user name that answers a device console's login prompt (a Linux VM's \"login:\"), and the SSH consoles' user (empty: gns3)")
	c.DevicePassword = os.Getenv("GNS3_COPILOT_DEVICE_PASSWORD") // environment only: flags show up in ps
	num(&c.MaxOpenConsoles, "max-open-consoles", "GNS3_COPILOT_MAX_OPEN_CONSOLES", devices.DefaultMaxOpenConsoles, "device consoles one worker process holds open at once, across all tool calls; the rest wait for a free one (0: no limit)")
	str(&c.Approval, "approval", "GNS3_COPILOT_APPROVAL", domain.ApprovalChanges, "which tool calls wait for the session owner's approval: changes (configuration and delete/stop/reload), config (configuration only) or never")
	dur(&c.ApprovalTimeout, "approval-timeout", "GNS3_COPILOT_APPROVAL_TIMEOUT", 30*time.Minute, "how long an approval waits before it expires (rejected as expired)")
	dur(&c.ExerciseTTL, "exercise-ttl", "GNS3_COPILOT_EXERCISE_TTL", 7*24*time.Hour, "how long a fault-injection exercise waits for its student before it expires")
	dur(&c.EventTTL, "event-ttl", "GNS3_COPILOT_EVENT_TTL", time.Hour, "how long a finished turn's events stay available for rejoining")
	str(&c.LogLevel, "log-level", "GNS3_COPILOT_LOG_LEVEL", "info", "debug, info, warn or error")
	var allowHosts string
	str(&allowHosts, "llm-allow-hosts", "GNS3_COPILOT_LLM_ALLOW_HOSTS", "", "comma-separated host names, CIDRs or * that regular users' LLM configurations may reach besides public addresses")
	fs.BoolVar(&c.LLMAllowlistOnly, "llm-allowlist-only", envBool("GNS3_COPILOT_LLM_ALLOWLIST_ONLY", false),
		"regular users' LLM configurations may reach only --llm-allow-hosts, public addresses included (env GNS3_COPILOT_LLM_ALLOWLIST_ONLY)")
	num(&c.MaxTurnsPerUser, "max-turns-per-user", "GNS3_COPILOT_MAX_TURNS_PER_USER", 4, "turns one user may have running at once, across sessions (0: no limit)")
	num(&c.MCPMaxCallsPerUser, "mcp-max-calls-per-user", "GNS3_COPILOT_MCP_MAX_CALLS_PER_USER", 4, "MCP tool calls one user may have running at once (0: no limit)")
	dur(&c.MCPElicitTimeout, "mcp-elicit-timeout", "GNS3_COPILOT_MCP_ELICIT_TIMEOUT", 60*time.Second, "how long an approval asked in an MCP client (elicitation) waits for its user before the call answers with the plan and decide_approval")
	var mcpOrigins string
	str(&mcpOrigins, "mcp-allowed-origins", "GNS3_COPILOT_MCP_ALLOWED_ORIGINS", "", "comma-separated browser origins /mcp accepts besides the copilot's own (* for any); requests without Origin are always accepted")
	num(&c.TurnsPerMinute, "turns-per-minute", "GNS3_COPILOT_TURNS_PER_MINUTE", 10, "turns one user may start per minute, in bursts of as many (0: no limit)")
	var budget int
	num(&budget, "daily-token-budget", "GNS3_COPILOT_DAILY_TOKEN_BUDGET", 0, "tokens one user's turns may consume per UTC day (0: no budget)")
	fs.BoolVar(&c.LimitSuperadmins, "limit-superadmins", envBool("GNS3_COPILOT_LIMIT_SUPERADMINS", false),
		"apply the per-user limits to GNS3 superadmins too (env GNS3_COPILOT_LIMIT_SUPERADMINS)")
	fs.BoolVar(&c.ProxyGNS3, "proxy-gns3", envBool("GNS3_COPILOT_PROXY_GNS3", false),
		"serve GNS3 itself (web UI, API, WebSockets) at the listen address, forwarded to --gns3-url, so GNS3's AI chat panel works against the copilot; the copilot's page moves to /copilot/ (env GNS3_COPILOT_PROXY_GNS3)")
	str(&c.LogFormat, "log-format", "GNS3_COPILOT_LOG_FORMAT", "text", "log format: text (key=value) or json (one object a line)")
	str(&c.MetricsListen, "metrics-listen", "GNS3_COPILOT_METRICS_LISTEN", "", "serve /metrics on this address instead of the API's (a worker serves it here, else on --listen)")
	str(&c.PprofListen, "pprof-listen", "GNS3_COPILOT_PPROF_LISTEN", "", "serve Go's /debug/pprof/ profiles on this address (off when empty; keep it on loopback)")
	num(&c.MaxConcurrentActivities, "max-concurrent-activities", "GNS3_COPILOT_MAX_CONCURRENT_ACTIVITIES", 0, "activities one worker runs at once: tools and device sessions, and as many model calls (local activities); 0 keeps the Temporal SDK's defaults")
	var memLimit string
	str(&memLimit, "memory-limit", "GNS3_COPILOT_MEMORY_LIMIT", envString("GOMEMLIMIT", formatSize(app.DefaultMemoryLimit)),
		"soft limit of the Go runtime's memory (heap and stacks, not the binary's code), like 128MiB, 1GiB or off: near it the collector works harder instead of letting the heap grow; the process never fails for reaching it (default: GOMEMLIMIT when set)")
	var devMemLimit string
	str(&devMemLimit, "temporal-memory-limit", "GNS3_COPILOT_TEMPORAL_MEMORY_LIMIT", "off",
		"soft memory limit of the Temporal dev server serve starts (its GOMEMLIMIT), like 64MiB: it keeps the server's peak lower in a burst of turns at the cost of its CPU in that burst (docs/scale.md); off leaves it the environment serve has")
	var live bool
	fs.BoolVar(&live, "live-topology", envBool("GNS3_COPILOT_LIVE_TOPOLOGY", true),
		"keep opened projects' topology current from GNS3's notification stream instead of reading it per request (env GNS3_COPILOT_LIVE_TOPOLOGY)")
	var cors string
	str(&cors, "cors-origins", "GNS3_COPILOT_CORS_ORIGINS", "", "comma-separated browser origins allowed to call the API, e.g. the GNS3 web UI's http://gns3.example:3080")
	// finish turns the parsed values that need it into c's fields, and checks them.
	finish := func() error {
		c.CORSOrigins = splitList(cors)
		c.MCPAllowedOrigins = splitList(mcpOrigins)
		if c.MCPElicitTimeout < time.Second || c.MCPElicitTimeout > time.Hour {
			return fmt.Errorf("--mcp-elicit-timeout must be between 1s and 1h, not %s", c.MCPElicitTimeout)
		}
		c.LLMAllowHosts = splitList(allowHosts)
		c.DailyTokenBudget = int64(budget)
		c.NoLiveTopology = !live
		var err error
		if c.MemoryLimit, err = parseMemoryLimit("memory-limit", memLimit); err != nil {
			return err
		}
		if c.TemporalMemoryLimit, err = parseMemoryLimit("temporal-memory-limit", devMemLimit); err != nil {
			return err
		}
		for name, v := range map[string]int{"max-turns-per-user": c.MaxTurnsPerUser, "mcp-max-calls-per-user": c.MCPMaxCallsPerUser, "turns-per-minute": c.TurnsPerMinute, "daily-token-budget": budget, "max-open-consoles": c.MaxOpenConsoles} {
			if v < 0 {
				return fmt.Errorf("--%s must be 0 (no limit) or more, got %d", name, v)
			}
		}
		if !domain.ValidApprovalSetting(c.Approval) {
			return fmt.Errorf("--approval must be changes, config or never, not %q", c.Approval)
		}
		if c.ExerciseTTL < time.Minute || c.ExerciseTTL > 365*24*time.Hour {
			return fmt.Errorf("--exercise-ttl must be between 1m and 8760h, not %s", c.ExerciseTTL)
		}
		c.LLMReasoningEffort = llmconfig.NormalizeEffort(c.LLMReasoningEffort)
		if err := llmconfig.ValidateEffort(c.LLMProvider, c.LLMModel, c.LLMReasoningEffort); err != nil {
			return fmt.Errorf("--llm-reasoning-effort: %v", err)
		}
		if c.LLMIdleTimeout < time.Second || c.LLMIdleTimeout > time.Hour {
			return fmt.Errorf("--llm-idle-timeout must be between 1s and 1h, not %s", c.LLMIdleTimeout)
		}
		if c.ApprovalTimeout < time.Minute || c.ApprovalTimeout > 7*24*time.Hour {
			return fmt.Errorf("--approval-timeout must be between 1m and 168h, not %s", c.ApprovalTimeout)
		}
		return nil
	}
	return fs, &c, finish
}

func envString(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func envBool(name string, def bool) bool {
	if v, ok := os.LookupEnv(name); ok {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
		fmt.Fprintf(os.Stderr, "gns3-copilot: ignoring %s=%q: not true or false\n", name, v)
	}
	return def
}

func envInt(name string, def int) int {
	if v, ok := os.LookupEnv(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		fmt.Fprintf(os.Stderr, "gns3-copilot: ignoring %s=%q: not a whole number\n", name, v)
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, ok := os.LookupEnv(name); ok {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		fmt.Fprintf(os.Stderr, "gns3-copilot: ignoring %s=%q: not a duration like 30s\n", name, v)
	}
	return def
}

// sizeUnits are the suffixes parseSize accepts: GOMEMLIMIT's (B, KiB, MiB, GiB, TiB) and the
// decimal ones people also write.
var sizeUnits = []struct {
	suffix string
	bytes  float64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// parseMemoryLimit reads a soft memory limit flag: off or 0 for none, else a size of at least
// 16MiB (below that a Go program would collect all the time).
func parseMemoryLimit(flag, v string) (int64, error) {
	limit, err := parseSize(v)
	if err != nil || (limit != 0 && limit < 16<<20) {
		return 0, fmt.Errorf("--%s must be off, 0 or a size of at least 16MiB like 128MiB or 1GiB, not %q", flag, v)
	}
	return limit, nil
}

// parseSize reads a size like 128MiB, 1.5GiB or 200MB (a bare number is bytes); "off" and "0"
// are 0.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "off") {
		return 0, nil
	}
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(strings.ToUpper(s), strings.ToUpper(u.suffix)) {
			s, mult = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.bytes
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v*mult > 1<<62 {
		return 0, fmt.Errorf("not a size: %q", s)
	}
	return int64(v * mult), nil
}

// formatSize writes a whole number of MiB as such (a flag's default in -h), else bytes.
func formatSize(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + "MiB"
	}
	return strconv.FormatInt(n, 10)
}
