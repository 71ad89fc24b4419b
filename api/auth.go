package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
)

const (
	ctxProject      = "gns3copilot.project"
	ctxProjectCheck = "gns3copilot.project-check"
	// ctxChecksProject marks a route whose project is checked (checksProject).
	ctxChecksProject = "gns3copilot.checks-project"
)

// checksProject marks a route whose chain runs requireOpenedProject after requireUser, so the
// project check may start while the token is checked.
func checksProject(c *gin.Context) { c.Set(ctxChecksProject, true) }

// prefetchGroups reads ahead, for a new message (POST …/chat/stream), the groups that choose the
// turn's LLM configuration, when the token was seen before and so its user is known; it returns
// a function that waits for the read.
func (s *Server) prefetchGroups(c *gin.Context, client *gns3.Client, userID string) (wait func()) {
	warmer, ok := s.deps.LLM.(groupsWarmer)
	if !ok || userID == "" || c.Request.Method != http.MethodPost || !strings.HasSuffix(c.FullPath(), "/chat/stream") {
		return func() {}
	}
	ctx := c.Request.Context()
	done := make(chan struct{})
	go func() {
		defer close(done)
		warmer.WarmGroups(ctx, userID, client)
	}()
	return func() { <-done }
}

// projectCheck is the outcome of a project check made while the token was being checked.
type projectCheck struct {
	project *gns3.Project
	err     error
}

// prefetchProjectCheck starts the project check of the route's project (when it has one) through
// the live topology, and returns a function that waits for it and hands the outcome to
// requireOpenedProject, which reports it exactly as if it had asked itself. It is the same check
// with the same token, only asked before GNS3 has said whose token it is.
func (s *Server) prefetchProjectCheck(c *gin.Context, client *gns3.Client, _ string) (wait func()) {
	id := c.Param("project_id")
	if s.deps.Live == nil || !c.GetBool(ctxChecksProject) {
		return func() {}
	}
	if _, err := uuid.Parse(id); err != nil {
		return func() {}
	}
	ctx := c.Request.Context()
	done := make(chan projectCheck, 1)
	go func() {
		p, err := s.deps.Live.Project(ctx, client, id)
		done <- projectCheck{project: p, err: err}
	}()
	return func() { c.Set(ctxProjectCheck, <-done) }
}

// requireOpenedProject checks that the project exists, that the caller may see it, and that it
// is opened: the copilot only works on a project the user has open in GNS3.
func (s *Server) requireOpenedProject(c *gin.Context) {
	id := c.Param("project_id")
	if _, err := uuid.Parse(id); err != nil {
		abort(c, http.StatusUnprocessableEntity, "project_id must be a UUID, got '"+respond.Truncate(id, 80)+"'.")
		return
	}
	var p *gns3.Project
	var err error
	if v, ok := c.Get(ctxProjectCheck); ok {
		p, err = v.(projectCheck).project, v.(projectCheck).err
	} else {
		p, err = s.lookupProject(c, id)
	}
	if err != nil {
		if errors.Is(err, gns3.ErrNotFound) {
			abort(c, http.StatusNotFound, "Project '"+id+"' not found.")
			return
		}
		if errors.Is(err, gns3.ErrForbidden) {
			abort(c, http.StatusForbidden, "You do not have access to project '"+id+"'.")
			return
		}
		abortGNS3(c, err, "Looking up the project")
		return
	}
	if p.Status != gns3.ProjectOpened {
		abort(c, http.StatusForbidden, "Project must be opened to use chat. Current status: "+p.Status)
		return
	}
	c.Set(ctxProject, p)
	c.Next()
}

func currentProject(c *gin.Context) *gns3.Project { return c.MustGet(ctxProject).(*gns3.Project) }
