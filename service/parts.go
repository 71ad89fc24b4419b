package service

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/api"
	"github.com/gns3-copilot/gns3-copilot/credentials"
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
	store := llmconfig.NewStore(db, sealer, def).WithLogger(log)
	return parts{
		llmLoader:  store,
		llmChooser: store,
		tools:      tools.NewRegistry(tools.LabTools()...),
		routes:     []func(*gin.Engine, *api.Server){api.LLMConfigRoutes(store)},
	}, nil
}
