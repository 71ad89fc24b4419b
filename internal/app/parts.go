package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/activities"
	"github.com/gns3-copilot/gns3-copilot/api"
	"github.com/gns3-copilot/gns3-copilot/internal/credentials"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/skills"
	"github.com/gns3-copilot/gns3-copilot/internal/metrics"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/web"
)

// configuredParts are the pieces the configuration chooses: which LLM endpoints and tools a
// turn may use, how devices are reached, the page, the skills and the optional routes.
type configuredParts struct {
	llmLoader  llmconfig.Loader
	llmChooser api.LLMChooser
	tools      *tools.Registry
	devices    activities.DeviceAccess
	web        http.Handler
	skills     *skills.Store
	// untrustedHTTP reaches the endpoints of regular users' LLM configurations, through the
	// outbound policy.
	untrustedHTTP *http.Client
	llmConfigs    *llmconfig.Store
}

func buildConfiguredParts(db *gorm.DB, sealer *credentials.Sealer, rdb *redis.Client, cfg Config, log *slog.Logger) (configuredParts, error) {
	def := serverDefaultLLM(cfg)
	outbound, err := egress.New(cfg.LLMAllowHosts, cfg.LLMAllowlistOnly)
	if err != nil {
		return configuredParts{}, fmt.Errorf("--llm-allow-hosts: %w", err)
	}
	if cfg.LLMResolver != nil {
		outbound = outbound.WithResolver(cfg.LLMResolver)
	}
	store := llmconfig.NewStore(db, sealer, def).WithLogger(log).WithEgress(outbound).WithGroupCache(cfg.checkCacheTTL())
	policy := devices.DefaultPolicy()
	if cfg.ForbiddenCommands != "" {
		p, err := devices.LoadPolicy(cfg.ForbiddenCommands)
		if err != nil {
			return configuredParts{}, fmt.Errorf("--forbidden-commands: %w", err)
		}
		policy = p
	}
	sk, err := skills.Open(cfg.SkillsDir, policy)
	if err != nil {
		return configuredParts{}, fmt.Errorf("--skills-dir: %w", err)
	}
	// Consoles take one writer at a time; a turn waits this long for another to finish.
	const lockWait = 30 * time.Second
	var locker devices.Locker = devices.NewMemoryLocker(lockWait)
	if rdb != nil {
		locker = devices.NewRedisLocker(rdb, lockWait)
	}
	return configuredParts{
		devices: activities.DeviceAccess{Locker: locker, Policy: sk.Policy(),
			Options: devices.Options{Consoles: devices.NewConsoleLimit(cfg.MaxOpenConsoles), Username: cfg.DeviceUsername, Password: cfg.DevicePassword}},
		skills:     sk,
		llmLoader:  store,
		llmChooser: store,
		tools:      tools.NewRegistry(tools.AllTools()...),
		llmConfigs: store,
		web:        web.Handler(),

		untrustedHTTP: outbound.Client(),
	}, nil
}

// serverDefaultLLM is the operator's default model from the flags, nil when none is set.
func serverDefaultLLM(cfg Config) *llmconfig.Settings {
	if cfg.LLMBaseURL == "" && cfg.LLMModel == "" {
		return nil
	}
	base := cfg.LLMBaseURL
	if p, ok := llmconfig.PresetFor(cfg.LLMProvider); ok && base == "" {
		base = p.BaseURL // e.g. --llm-provider ollama --llm-model qwen3:8b is enough
	}
	return &llmconfig.Settings{Name: "server default", Provider: cfg.LLMProvider, BaseURL: base,
		Model: cfg.LLMModel, APIKey: cfg.LLMAPIKey, ContextLimitK: cfg.LLMContextLimitK, CopilotMode: cfg.CopilotMode,
		ReasoningEffort: cfg.LLMReasoningEffort}
}

// providerLabels are the provider names the metrics keep apart: the presets.
func providerLabels() []string {
	var ids []string
	for _, p := range llmconfig.Presets() {
		ids = append(ids, p.ID)
	}
	return ids
}

// approvalCounts lets the metrics read the approvals table without knowing the models package.
func approvalCounts(repo models.ApprovalRepository) func(context.Context) ([]metrics.ApprovalCount, error) {
	return func(ctx context.Context) ([]metrics.ApprovalCount, error) {
		rows, err := repo.Counts(ctx)
		out := make([]metrics.ApprovalCount, len(rows))
		for i, r := range rows {
			out[i] = metrics.ApprovalCount(r)
		}
		return out, err
	}
}
