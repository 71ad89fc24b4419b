package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/gns3-copilot/gns3-copilot/internal/auth"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3proxy"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// This file is the process's whole HTTP surface: every route the engine serves is mounted here,
// the optional ones when their part of Deps is set. openapi.json describes each of them, and a
// test fails for any route it does not describe.

// chatPrefixes are GNS3 3.0's prefix of the chat API and the one newer releases use.
var chatPrefixes = []string{"/v3/projects/:project_id/chat", "/v3/copilot/projects/:project_id/chat"}

// mcpPath is where the Model Context Protocol front door (package mcp) is served.
const mcpPath = "/mcp"

func (s *Server) routes(r *gin.Engine) {
	s.chatRoutes(r)
	s.approvalRoutes(r)
	s.superadminRoutes(r)
	s.gns3Routes(r)
	s.llmConfigRoutes(r)
	s.fallbackRoutes(r)
}

// chatRoutes: the health and API description, the metrics, and the chat API with its exercises.
func (s *Server) chatRoutes(r *gin.Engine) {
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/openapi.json", serveOpenAPI)
	if s.deps.MetricsHandler != nil {
		r.GET("/metrics", gin.WrapH(s.deps.MetricsHandler))
	}

	// The same chat API under the prefix of GNS3 3.0 and the one newer releases use.
	for _, prefix := range chatPrefixes {
		g := r.Group(prefix, checksProject, s.requireUser, s.requireOpenedProject)
		g.POST("/stream", s.postStream)
		g.GET("/sessions", s.listSessions)
		g.GET("/sessions/:session_id/history", s.getHistory)
		g.PATCH("/sessions/:session_id", s.renameSession)
		g.DELETE("/sessions/:session_id", s.deleteSession)
		g.PUT("/sessions/:session_id/pin", s.pinSession)
		g.DELETE("/sessions/:session_id/pin", s.unpinSession)
		g.POST("/sessions/:session_id/abort", s.abortTurn)
		g.GET("/sessions/:session_id/stream", s.joinStream)
		g.GET("/sessions/:session_id/export", s.exportSession)
		g.GET("/topology/stream", s.topologyStream)
		if s.deps.Exercises != nil {
			g.POST("/inject", s.postInject)
			g.GET("/sessions/:session_id/exercise", s.getExercise)
			g.POST("/sessions/:session_id/exercise/check", s.exerciseRequest(workflows.ExerciseCheckUpdate))
			g.POST("/sessions/:session_id/exercise/hint", s.exerciseRequest(workflows.ExerciseHintUpdate))
			g.POST("/sessions/:session_id/exercise/give-up", s.exerciseRequest(workflows.ExerciseGiveUpUpdate))
			g.POST("/sessions/:session_id/exercise/reset", s.postExerciseReset)
		}
	}
}

// approvalRoutes: the approvals of a session's turns (and, per project, of MCP calls) and the
// configuration jobs' audit, under both chat prefixes.
func (s *Server) approvalRoutes(r *gin.Engine) {
	if h := s.replies; h != nil {
		for _, prefix := range chatPrefixes {
			g := r.Group(prefix, s.requireUser, s.requireOpenedProject)
			g.GET("/sessions/:session_id/approvals", h.list)
			g.POST("/sessions/:session_id/approvals/:approval_id", h.decide)
			// Per project: approvals asked outside any chat session (MCP calls) show here too.
			g.GET("/approvals", h.listProject)
			g.POST("/approvals/:approval_id", h.decideInProject)
			g.GET("/config-jobs", h.configJobs)
		}
	}
}

// superadminRoutes: the teacher's view of exercises with their injected faults, and the skills.
func (s *Server) superadminRoutes(r *gin.Engine) {
	if s.deps.Exercises != nil {
		g := r.Group("/v3/copilot/exercises", s.requireUser,
			auth.RequireSuperadmin("Only a GNS3 superadmin (the teacher) may read exercise records."))
		g.GET("", s.listExerciseRecords)
		g.GET("/:exercise_id", s.getExerciseRecord)
	}

	// The superadmin's view and reload of the skills; the reload is the route GNS3's own copilot
	// uses.
	if s.deps.Skills != nil {
		h := &skillsAPI{s: s, store: s.deps.Skills}
		superadmin := auth.RequireSuperadmin("Only a superadmin may read or reload the copilot's skills.")
		r.GET("/v3/copilot/skills", s.requireUser, superadmin, h.get)
		r.POST("/v3/copilot/reload/skills", s.requireUser, superadmin, h.reload)
	}
}

// gns3Routes: what the chat page needs from GNS3, passed through so the browser talks to one
// origin. In front of GNS3 (--proxy-gns3) the real ones answer instead.
func (s *Server) gns3Routes(r *gin.Engine) {
	if s.deps.GNS3Proxy == nil {
		r.POST("/v3/access/users/authenticate", s.authenticate)
		r.GET("/v3/access/users/me", s.requireUser, s.me)
		r.GET("/v3/projects", s.requireUser, s.listProjects)
		r.POST("/v3/projects/:project_id/open", s.requireUser, s.openProject)
	}
}

// llmConfigRoutes: LLM model configurations, as the reference implementation serves them:
// users' and groups' own, and the provider presets the page offers.
func (s *Server) llmConfigRoutes(r *gin.Engine) {
	if store := s.deps.LLMConfigs; store != nil {
		h := &llmConfigAPI{s: s, store: store}
		r.GET("/v3/access/llm-providers", s.requireUser, h.providers)

		u := r.Group("/v3/access/users/:user_id/llm-model-configs", s.requireUser, h.userOwner)
		u.GET("", h.listInherited)
		u.GET("/own", h.listOwn)
		u.GET("/default", h.getDefault)
		u.POST("", h.create)
		u.GET("/:config_id", h.get)
		u.PUT("/:config_id", h.update)
		u.DELETE("/:config_id", h.delete)
		u.PUT("/default/:config_id", h.setDefault)

		read, write := h.groupOwner(false), h.groupOwner(true)
		g := r.Group("/v3/access/groups/:group_id/llm-model-configs", s.requireUser)
		g.GET("", read, h.listGroup)
		g.GET("/default", read, h.getDefault)
		g.POST("", write, h.create)
		g.GET("/:config_id", read, h.get)
		g.PUT("/:config_id", write, h.update)
		g.DELETE("/:config_id", write, h.delete)
		g.PUT("/default/:config_id", write, h.setDefault)
	}
}

// fallbackRoutes: the MCP front door (Streamable HTTP, behind the chat API's own
// authentication), then whatever no route took: GNS3 behind us, or the chat page.
func (s *Server) fallbackRoutes(r *gin.Engine) {
	if s.deps.MCP != nil {
		chain := []gin.HandlerFunc{s.requireUser, s.deps.MCP}
		if s.deps.MCPOrigin != nil {
			// A foreign page is refused before its token is even looked at.
			chain = append([]gin.HandlerFunc{s.deps.MCPOrigin}, chain...)
		}
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			r.Handle(m, mcpPath, chain...)
		}
	}

	if s.deps.GNS3Proxy != nil {
		r.NoRoute(s.frontGNS3)
		return
	}
	r.NoRoute(func(c *gin.Context) {
		if s.deps.Web == nil || strings.HasPrefix(c.Request.URL.Path, "/v3/") {
			abort(c, http.StatusNotFound, "No such API route: "+c.Request.Method+" "+c.Request.URL.Path)
			return
		}
		s.deps.Web.ServeHTTP(c.Writer, c.Request)
	})
}

// frontGNS3 answers what is not the copilot's own when the copilot sits in front of GNS3: the
// copilot's page under gns3proxy.CopilotPagePath, everything else from GNS3.
func (s *Server) frontGNS3(c *gin.Context) {
	p := c.Request.URL.Path
	page := gns3proxy.CopilotPagePath
	switch {
	case s.deps.Web != nil && p == strings.TrimSuffix(page, "/"):
		c.Redirect(http.StatusMovedPermanently, page) // the page's assets are relative to it
	case s.deps.Web != nil && strings.HasPrefix(p, page):
		http.StripPrefix(strings.TrimSuffix(page, "/"), s.deps.Web).ServeHTTP(c.Writer, c.Request)
	default:
		s.deps.GNS3Proxy.ServeHTTP(c.Writer, c.Request)
	}
}
