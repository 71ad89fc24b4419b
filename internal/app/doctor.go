package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sashabaranov/go-openai"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// GNS3Login is the optional GNS3 login `doctor` tries: a user with a password, or a token.
type GNS3Login struct {
	User, Password, Token string
}

// Bounds of doctor's checks: an answer slower than these is a finding in itself, and the
// whole run stays within seconds even when everything it asks is down.
const (
	doctorDialTimeout  = 5 * time.Second
	doctorModelTimeout = 30 * time.Second
)

// checkStatus is how a check came out; only fail makes doctor exit non-zero.
type checkStatus string

const (
	checkOK   checkStatus = "ok"
	checkWarn checkStatus = "warn"
	checkFail checkStatus = "FAIL"
	checkSkip checkStatus = "skip"
)

// finding is one line of doctor's report and, when something is wrong, the fix.
type finding struct {
	status checkStatus
	what   string
	fix    string
}

func passed(format string, a ...any) finding {
	return finding{status: checkOK, what: fmt.Sprintf(format, a...)}
}
func skipped(format string, a ...any) finding {
	return finding{status: checkSkip, what: fmt.Sprintf(format, a...)}
}
func failed(fix, format string, a ...any) finding {
	return finding{status: checkFail, what: fmt.Sprintf(format, a...), fix: fix}
}
func warned(fix, format string, a ...any) finding {
	return finding{status: checkWarn, what: fmt.Sprintf(format, a...), fix: fix}
}

// Doctor checks what `serve` with cfg would depend on, writes one line per check (and the fix
// under each failure) to w, and reports whether none failed. It changes nothing: the data
// directory check writes a temporary file and removes it, the database is only pinged, and
// the model gets two short prompts. Nothing secret is printed: URLs lose their passwords,
// and provider messages are clipped to one line.
func Doctor(ctx context.Context, cfg Config, login GNS3Login, w io.Writer) bool {
	var all []finding
	report := func(fs ...finding) {
		for _, f := range fs {
			all = append(all, f)
			fmt.Fprintf(w, "%-4s  %s\n", f.status, f.what)
			if f.fix != "" {
				fmt.Fprintf(w, "      fix: %s\n", f.fix)
			}
		}
	}
	report(checkGNS3(ctx, cfg, login)...)
	report(checkDataDir(cfg.DataDir))
	report(checkTemporal(ctx, cfg))
	report(checkRedis(ctx, cfg.RedisURL))
	report(checkPostgres(ctx, cfg.DatabaseURL))
	report(checkModel(ctx, cfg)...)
	report(checkStoredModels(ctx, cfg)...)
	failures := 0
	for _, f := range all {
		if f.status == checkFail {
			failures++
		}
	}
	if failures > 0 {
		fmt.Fprintf(w, "%d of %d checks failed\n", failures, len(all))
		return false
	}
	fmt.Fprintf(w, "all %d checks passed\n", len(all))
	return true
}

func checkGNS3(ctx context.Context, cfg Config, login GNS3Login) []finding {
	timeout := min(cfg.GNS3Timeout, doctorDialTimeout)
	server := gns3.NewServer(cfg.GNS3URL, timeout)
	where := "GNS3 at " + redactURL(server.BaseURL())
	v, err := server.Version(ctx)
	var apiErr *gns3.APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound:
		if old := gns3v2Version(ctx, server.BaseURL(), timeout); old != "" {
			return []finding{failed("the copilot needs GNS3 v3 (3.0 or later): upgrade the GNS3 server, or point --gns3-url (GNS3_COPILOT_GNS3_URL) at a v3 one",
				"%s is GNS3 %s, which has no v3 API", where, old)}
		}
		return []finding{failed("point --gns3-url (GNS3_COPILOT_GNS3_URL) at the GNS3 controller itself, e.g. http://127.0.0.1:3080, without a path",
			"%s answers 404 for /v3/version: not a GNS3 v3 controller", where)}
	case err != nil:
		return []finding{failed("start gns3-server (systemctl status gns3-server), or set --gns3-url (GNS3_COPILOT_GNS3_URL) to where it listens",
			"%s: %v", where, err)}
	}
	if major, _, _ := strings.Cut(v.Version, "."); major != "" {
		if n, err := strconv.Atoi(major); err == nil && n < 3 {
			return []finding{failed("the copilot needs GNS3 v3 (3.0 or later): upgrade the GNS3 server",
				"%s is GNS3 %s; the copilot needs v3", where, v.Version)}
		}
	}
	return []finding{passed("%s is GNS3 %s", where, v.Version), checkGNS3Login(ctx, server, login)}
}

// gns3v2Version asks the GNS3 2.x route for the version, to tell an old server from a wrong URL.
func gns3v2Version(ctx context.Context, base string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v2/version", nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var v gns3.Version
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&v) != nil {
		return ""
	}
	return v.Version
}

func checkGNS3Login(ctx context.Context, server *gns3.Server, login GNS3Login) finding {
	token := login.Token
	as := "the token in GNS3_COPILOT_GNS3_TOKEN"
	if login.User != "" {
		as = "user " + login.User
		if login.Password == "" {
			return failed("set the password in GNS3_COPILOT_GNS3_PASSWORD (environment only)", "GNS3 login as %s: no password given", as)
		}
		t, err := server.Authenticate(ctx, login.User, login.Password)
		if err != nil {
			return failed("check the user name and GNS3_COPILOT_GNS3_PASSWORD against GNS3's users", "GNS3 login as %s: %v", as, err)
		}
		token = t.AccessToken
	}
	if token == "" {
		return skipped("GNS3 login: not tried (give --gns3-user with GNS3_COPILOT_GNS3_PASSWORD, or GNS3_COPILOT_GNS3_TOKEN)")
	}
	u, err := server.WithToken(token).CurrentUser(ctx)
	if err != nil {
		return failed("log in to GNS3 again for a fresh token, or use --gns3-user", "GNS3 login with %s: %v", as, err)
	}
	return passed("GNS3 login with %s works (user %s)", as, u.Username)
}

// checkDataDir proves the directory writable the only sure way, by writing; a directory that
// does not exist yet is fine when serve can create it.
func checkDataDir(dir string) finding {
	const fix = "give the service's user a writable directory with --data-dir (GNS3_COPILOT_DATA_DIR); the package's unit uses /var/lib/gns3-copilot"
	if dir == "" {
		return failed(fix, "data directory: none given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return failed(fix, "data directory %s: %v", dir, err)
	}
	probe, missing := abs, false
	for {
		fi, err := os.Stat(probe)
		if err == nil {
			if !fi.IsDir() {
				return failed(fix, "data directory %s: %s is not a directory", abs, probe)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(probe) == probe {
			return failed(fix, "data directory %s: %v", abs, err)
		}
		probe, missing = filepath.Dir(probe), true
	}
	f, err := os.CreateTemp(probe, ".doctor-*")
	if err != nil {
		return failed(fix, "data directory %s: cannot write in %s: %v", abs, probe, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	if missing {
		return passed("data directory %s does not exist yet; serve will create it in %s, which is writable", abs, probe)
	}
	return passed("data directory %s is writable", abs)
}

func checkTemporal(ctx context.Context, cfg Config) finding {
	if cfg.TemporalAddress == "" {
		cli, err := temporaldev.FindCLI(cfg.TemporalCLI)
		if err != nil {
			return failed("install it with `"+temporaldev.InstallCommand+"` (or `make temporal`), point --temporal-cli at it, or give --temporal-address",
				"Temporal CLI (serve starts its dev server): %v", firstSentence(err))
		}
		what := "Temporal CLI"
		if strings.TrimSuffix(filepath.Base(cli), ".exe") == temporaldev.DevServerName {
			what = "the copilot's dev server, of Temporal CLI"
		}
		switch v := temporaldev.CLIModuleVersion(cli); v {
		case "v" + temporaldev.CLIVersion:
			return passed("%s %s at %s", what, v, cli)
		case "":
			return passed("%s at %s (its version could not be read; v%s is the tested one)", what, cli, temporaldev.CLIVersion)
		default:
			return warned("install the tested release with `"+temporaldev.InstallCommand+"`",
				"%s %s at %s differs from the tested v%s", what, v, cli, temporaldev.CLIVersion)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, doctorDialTimeout)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		return failed("start Temporal there, or fix --temporal-address (GNS3_COPILOT_TEMPORAL_ADDRESS); leave it empty for serve's own dev server",
			"Temporal at %s: %v", cfg.TemporalAddress, err)
	}
	defer c.Close()
	if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: cfg.TemporalNamespace}); err != nil {
		return failed("create it (temporal operator namespace create "+cfg.TemporalNamespace+") or set --temporal-namespace",
			"Temporal at %s answers, but namespace %q: %v", cfg.TemporalAddress, cfg.TemporalNamespace, err)
	}
	return passed("Temporal at %s answers, namespace %q exists", cfg.TemporalAddress, cfg.TemporalNamespace)
}

func checkRedis(ctx context.Context, redisURL string) finding {
	if redisURL == "" {
		return skipped("Redis: not configured; events, credentials and device locks stay in this process")
	}
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return failed("write --redis-url (GNS3_COPILOT_REDIS_URL) as redis://host:6379/0", "Redis URL %s: %v", redactURL(redisURL), err)
	}
	opt.DialTimeout, opt.ReadTimeout = doctorDialTimeout, doctorDialTimeout
	opt.MaxRetries = -1
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return failed("start Redis or fix --redis-url (GNS3_COPILOT_REDIS_URL)", "Redis at %s: %v", opt.Addr, err)
	}
	return passed("Redis at %s answers", opt.Addr)
}

func checkPostgres(ctx context.Context, databaseURL string) finding {
	if !models.IsPostgres(databaseURL) {
		return skipped("PostgreSQL: not configured; SQLite in the data directory")
	}
	where := redactURL(databaseURL)
	ctx, cancel := context.WithTimeout(ctx, doctorDialTimeout)
	defer cancel()
	fail := func(err error) finding {
		msg := err.Error()
		if u, perr := url.Parse(databaseURL); perr == nil {
			if pw, set := u.User.Password(); set && pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
		}
		return failed("start PostgreSQL, create the database and its user, or fix --database-url (GNS3_COPILOT_DATABASE_URL)",
			"PostgreSQL at %s: %s", where, msg)
	}
	type opened struct {
		err   error
		close func() error
	}
	// gorm's open has no context; it runs aside so a server that never answers cannot hold
	// doctor longer than its bound.
	done := make(chan opened, 1)
	go func() {
		db, err := models.Open(databaseURL, "")
		if err != nil {
			done <- opened{err: err}
			return
		}
		sqlDB, err := db.DB()
		if err == nil {
			err = sqlDB.PingContext(ctx)
		}
		closeDB := func() error { return nil }
		if sqlDB != nil {
			closeDB = sqlDB.Close
		}
		done <- opened{err: err, close: closeDB}
	}()
	select {
	case o := <-done:
		if o.close != nil {
			defer o.close()
		}
		if o.err != nil {
			return fail(o.err)
		}
		return passed("PostgreSQL at %s answers", where)
	case <-ctx.Done():
		return fail(errors.New("no answer within " + doctorDialTimeout.String()))
	}
}

// doctorTool is the trivial tool the model is offered: a model that will not call even this
// one cannot run the copilot's tools.
const doctorTool = "report_status"

func checkModel(ctx context.Context, cfg Config) (out []finding) {
	s := serverDefaultLLM(cfg)
	if s == nil {
		return []finding{skipped("server default model: none configured (--llm-model, --llm-base-url); each user must add their own LLM configuration in the page")}
	}
	where := fmt.Sprintf("model %s at %s", s.Model, redactURL(s.BaseURL))
	policy := checkEgress(cfg, s.BaseURL)
	if f, ok := retiredModel("server default model "+s.Model, s.Provider, s.Model, "set --llm-model to "); ok {
		// Said first: what follows may fail because of it, or be answered by another model.
		defer func() { out = append([]finding{f}, out...) }()
	}
	if s.BaseURL == "" || s.Model == "" {
		return []finding{failed("set both --llm-base-url (or a known --llm-provider) and --llm-model",
			"server default model: base URL %q, model %q", s.BaseURL, s.Model), policy}
	}
	c := openai.NewClientWithConfig(llmconfig.ClientConfig(*s, nil))
	ask := func(req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		req.Model = s.Model
		llmconfig.ShapeRequest(*s, &req)
		cctx, cancel := context.WithTimeout(ctx, doctorModelTimeout)
		defer cancel()
		return c.CreateChatCompletion(cctx, req)
	}
	resp, err := ask(openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "Reply with the single word: ready"}}})
	if err != nil {
		return []finding{modelFailure(where, err, "a one-line prompt"), policy}
	}
	if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Message.Content) == "" && len(resp.Choices[0].Message.ToolCalls) == 0 {
		return []finding{failed("check that --llm-model names a chat model of that provider",
			"%s answered a one-line prompt with nothing", where), policy}
	}
	answered := passed("%s answers a one-line prompt", where)

	resp, err = ask(openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser,
			Content: `Call the ` + doctorTool + ` tool with status "ok". Do not answer in text.`}},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: doctorTool, Description: "Report a status.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`)}}},
	})
	const noTools = "the copilot works only through tool calls: pick a model with tool support (Ollama: one tagged \"tools\", e.g. qwen3:8b or gpt-oss:20b; " +
		"vLLM: start it with --enable-auto-tool-choice and a --tool-call-parser; LM Studio: a model whose card lists tool use)"
	if err != nil {
		if llmconfig.ErrorClass(err) == llmconfig.ErrorBadRequest {
			return []finding{answered, failed(noTools, "%s cannot call tools: offered one, it refused the request (%s)", where, providerSaid(err)), policy}
		}
		return []finding{answered, modelFailure(where, err, "a prompt with a tool"), policy}
	}
	for _, ch := range resp.Choices {
		for _, tc := range ch.Message.ToolCalls {
			if tc.Function.Name == doctorTool {
				return []finding{answered, passed("%s calls tools (it called %s when asked)", where, doctorTool), policy}
			}
		}
	}
	return []finding{answered, failed(noTools, "%s cannot call tools: offered one and asked to call it, it answered in text", where), policy}
}

// checkEgress reports what the outbound policy says of the model's host. The server default is
// the operator's own and reaches its host in any case; what this tells is whether regular
// users' configurations could use the same endpoint.
func checkEgress(cfg Config, baseURL string) finding {
	p, err := egress.New(cfg.LLMAllowHosts, cfg.LLMAllowlistOnly)
	if err != nil {
		return failed("fix --llm-allow-hosts (GNS3_COPILOT_LLM_ALLOW_HOSTS): host names, CIDRs or *", "outbound policy: %v", err)
	}
	host := baseURL
	if u, err := url.Parse(baseURL); err == nil {
		host = u.Hostname()
	}
	if err := p.CheckURL(baseURL); err != nil {
		return warned("add "+host+" to --llm-allow-hosts (GNS3_COPILOT_LLM_ALLOW_HOSTS) if users' own configurations should use it",
			"outbound policy: the server default reaches %s, but users' own LLM configurations may not (%v)", host, err)
	}
	return passed("outbound policy allows %s", host)
}

// modelFailure words a failed call by its class, with the setting that fixes it.
func modelFailure(where string, err error, what string) finding {
	fix := "check --llm-base-url (it usually ends in /v1) and --llm-model"
	switch llmconfig.ErrorClass(err) {
	case llmconfig.ErrorAuth:
		fix = "set the provider's key in GNS3_COPILOT_LLM_API_KEY (environment only; the package reads /etc/gns3-copilot/gns3-copilot.env)"
	case llmconfig.ErrorRateLimit:
		fix = "the provider's quota or rate limit: wait, or raise the plan's limits"
	case llmconfig.ErrorServer:
		fix = "the provider is failing: try again later, or choose another provider"
	case llmconfig.ErrorTimeout:
		fix = "the model did not answer in " + doctorModelTimeout.String() + ": a local model may still be loading (try again), or the machine is too small for it"
	case llmconfig.ErrorNetwork:
		fix = "start the model server, or fix --llm-base-url; a local server must listen where the copilot's host can reach it"
	}
	return failed(fix, "%s failed %s: %s", where, what, providerSaid(err))
}

// providerSaid is a failed call in one clipped line without the request's URL, which could
// carry a key in its query (Azure, some proxies).
func providerSaid(err error) string {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var ue *url.Error
	msg := err.Error()
	switch {
	case errors.As(err, &apiErr):
		msg = fmt.Sprintf("HTTP %d: %s", apiErr.HTTPStatusCode, apiErr.Message)
	case errors.As(err, &reqErr):
		msg = fmt.Sprintf("HTTP %d %s", reqErr.HTTPStatusCode, http.StatusText(reqErr.HTTPStatusCode))
	case errors.As(err, &ue):
		msg = ue.Err.Error()
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	return msg
}

// redactURL drops a URL's password and query (where keys and passwords live); what is left
// says where, which is what a report needs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	if _, set := u.User.Password(); set {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	u.RawQuery = ""
	return u.String()
}

func firstSentence(err error) string {
	s, _, _ := strings.Cut(err.Error(), "; ")
	return s
}

// retiredModel is the finding for a model id its provider has retired (a failure: its requests
// fail or are answered by another model) or scheduled to retire (a warning), and what to use
// instead; ok is false for a model nobody retires.
func retiredModel(what, provider, model, fix string) (finding, bool) {
	r, ok := llmconfig.RetirementOf(provider, model)
	if !ok {
		return finding{}, false
	}
	note := ""
	if r.Note != "" {
		note = " (" + r.Note + ")"
	}
	fix += r.Instead + "; see " + r.Source
	when := r.Since.Format(time.DateOnly)
	if r.Retired(time.Now()) {
		return failed(fix, "%s was retired by %s on %s%s", what, provider, when, note), true
	}
	return warned(fix, "%s is deprecated by %s and shuts down on %s", what, provider, when), true
}

// checkStoredModels reads the LLM configurations users and groups saved, when there is a
// database to read, and names each one whose model its provider has retired or will retire,
// with what to use instead; its owner changes it on the page. It reads only: a SQLite file that
// does not exist yet is not created.
func checkStoredModels(ctx context.Context, cfg Config) []finding {
	if !models.IsPostgres(cfg.DatabaseURL) {
		path := models.SQLitePath(cfg.DatabaseURL, cfg.DataDir)
		if _, err := os.Stat(path); path == "" || err != nil {
			return nil // nothing stored yet
		}
	}
	type row struct{ Name, OwnerType, OwnerID, Provider, Model string }
	var rows []row
	ctx, cancel := context.WithTimeout(ctx, doctorDialTimeout)
	defer cancel()
	done := make(chan error, 1)
	// gorm's open has no context; it runs aside so a database that never answers cannot hold
	// doctor longer than its bound.
	go func() {
		db, err := models.Open(cfg.DatabaseURL, cfg.DataDir)
		if err != nil {
			done <- err
			return
		}
		if sqlDB, err := db.DB(); err == nil {
			defer sqlDB.Close()
		}
		if !db.Migrator().HasTable("llm_model_configs") {
			done <- nil
			return
		}
		done <- db.WithContext(ctx).Raw(`SELECT name, owner_type, owner_id, provider, model FROM llm_model_configs WHERE inherits_from = '' ORDER BY owner_type, owner_id, name`).Scan(&rows).Error
	}()
	select {
	case err := <-done:
		if err != nil {
			return []finding{warned("run doctor again once the database answers", "stored LLM configurations could not be read: %v", err)}
		}
	case <-ctx.Done():
		return []finding{warned("run doctor again once the database answers", "stored LLM configurations: no answer within %s", doctorDialTimeout)}
	}
	var out []finding
	for _, r := range rows {
		what := fmt.Sprintf("LLM configuration %q of %s %s uses %s, which", r.Name, r.OwnerType, r.OwnerID, r.Model)
		if f, ok := retiredModel(what, r.Provider, r.Model, "its owner sets its model to "); ok {
			f.status = checkWarn // a user's configuration: serve runs, that user's turns fail
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return []finding{passed("stored LLM configurations: %d, none on a model its provider has retired or will retire", len(rows))}
	}
	return out
}
