package service

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/api"
	"github.com/gns3-copilot/gns3-copilot/credentials"
	"github.com/gns3-copilot/gns3-copilot/gns3"
	"github.com/gns3-copilot/gns3-copilot/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/tools"
)

// parts are the pieces whose choice depends on configuration.
type parts struct {
	llmLoader  llmconfig.Loader
	llmChooser api.LLMChooser
	tools      *tools.Registry
	web        http.Handler
	routes     []func(*gin.Engine, *api.Server)
}

func buildParts(db *gorm.DB, sealer *credentials.Sealer, rdb *redis.Client, cfg Config, log *slog.Logger) (parts, error) {
	var def *llmconfig.Settings
	if cfg.LLMBaseURL != "" || cfg.LLMModel != "" {
		def = &llmconfig.Settings{Name: "server default", Provider: cfg.LLMProvider, BaseURL: cfg.LLMBaseURL,
			Model: cfg.LLMModel, APIKey: cfg.LLMAPIKey, ContextLimitK: cfg.LLMContextLimitK, CopilotMode: cfg.CopilotMode}
	}
	static := llmconfig.Static{Default: def}
	return parts{
		llmLoader:  static,
		llmChooser: staticChooser{static},
		tools:      tools.NewRegistry(tools.LabTools()...),
	}, nil
}

type staticChooser struct{ s llmconfig.Static }

func (c staticChooser) Choose(ctx context.Context, _ string, _ *gns3.Client) (llmconfig.Settings, error) {
	return c.s.Load(ctx, "")
}
