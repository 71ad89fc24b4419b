package api

import (
	"net/http"
	"sort"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
)

// authenticate proxies GNS3's sign-in so the chat page needs only this origin. The token goes
// back to the page in the body; nothing is stored here.
func (s *Server) authenticate(c *gin.Context) {
	var body struct {
		Username *string `json:"username"`
		Password *string `json:"password"`
	}
	if !decodeJSON(c, &body, 8<<10) {
		return
	}
	if body.Username == nil || *body.Username == "" || body.Password == nil {
		abort(c, http.StatusUnprocessableEntity, "username and password are required.")
		return
	}
	tok, err := s.deps.GNS3.Authenticate(c.Request.Context(), *body.Username, *body.Password)
	if err != nil {
		abortGNS3(c, err, "Signing in to GNS3")
		return
	}
	c.JSON(http.StatusOK, gin.H{"access_token": tok.AccessToken, "token_type": tok.TokenType})
}

func (s *Server) me(c *gin.Context) {
	u := currentUser(c)
	c.JSON(http.StatusOK, gin.H{"user_id": u.ID, "username": u.Username, "is_superadmin": u.Superadmin})
}

// listProjects lists the caller's projects, opened ones first, as the page shows them.
func (s *Server) listProjects(c *gin.Context) {
	list, err := currentUser(c).GNS3.ListProjects(c.Request.Context())
	if err != nil {
		abortGNS3(c, err, "Listing projects")
		return
	}
	sort.SliceStable(list, func(i, j int) bool {
		oi, oj := list[i].Status == gns3.ProjectOpened, list[j].Status == gns3.ProjectOpened
		if oi != oj {
			return oi
		}
		return list[i].Name < list[j].Name
	})
	if list == nil {
		list = []gns3.Project{}
	}
	c.JSON(http.StatusOK, list)
}

func (s *Server) openProject(c *gin.Context) {
	id := c.Param("project_id")
	if _, err := uuid.Parse(id); err != nil {
		abort(c, http.StatusUnprocessableEntity, "project_id must be a UUID.")
		return
	}
	p, err := currentUser(c).GNS3.OpenProject(c.Request.Context(), id)
	if err != nil {
		abortGNS3(c, err, "Opening the project")
		return
	}
	c.JSON(http.StatusOK, p)
}
