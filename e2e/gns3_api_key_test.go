package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/app"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// A GNS3 3.1 API key ("gns3_…", not a JWT) is a bearer like any other: GNS3 says whose it is
// (GET /v3/access/users/me), the chat API and MCP act with it, the credential store seals it,
// it reaches neither Temporal's history nor the log, and once revoked it stops working within
// the token cache's lifetime.
func TestAGNS3APIKeyWorksUntilItIsRevoked(t *testing.T) {
	const cacheTTL = 2 * time.Second
	env := e2eenv.Start(t, e2eenv.Options{Mode: "lab_automation_assistant", Approval: "changes", LogLevel: "debug",
		Configure: func(c *app.Config) { c.CheckCacheTTL = cacheTTL }})
	key := env.GNS3.IssueAPIKey(e2eenv.Username)
	node := env.GNS3.AddNode(env.ProjectID, fakegns3.NodeSpec{Template: fakegns3.VPCSTemplateID, Name: "PC1"})

	code, body := env.DoAs(key, http.MethodGet, "/v3/access/users/me", nil)
	require.Equal(t, http.StatusOK, code, string(body))
	require.Contains(t, string(body), `"username":"alice"`)

	// A chat turn with the key: its tool acts in GNS3 with it.
	env.LLM.SetHandler(titleReplies("Key"))
	env.LLM.Enqueue(fakeopenai.Calls(fakeopenai.ToolCall{ID: "c1", Name: "get_gns3_topology", Arguments: `{}`}), fakeopenai.Text("done"))
	code, body = env.DoAs(key, http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "what is in my lab?"})
	require.Equal(t, http.StatusOK, code, string(body))
	require.Contains(t, string(body), `"status":"completed"`)
	require.Contains(t, string(body), "PC1", "the tool read the lab with the key")
	var started struct {
		SessionID string `json:"session_id"`
		TurnID    string `json:"turn_id"`
	}
	for _, line := range strings.Split(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"turn_started"`) {
			require.NoError(t, json.Unmarshal([]byte(data), &started))
			break
		}
	}
	require.NotEmpty(t, started.TurnID, string(body))

	// An MCP call with the key that waits for approval: its credential is stored sealed.
	c, err := connectMCP(t, env, key, "")
	require.NoError(t, err)
	res, waiting := callTool(t, c, "delete_gns3_node", map[string]any{"project_id": env.ProjectID, "node_ids": []string{node.ID}}, nil)
	require.Equal(t, "waiting_approval", res.Meta["status"], "%+v", waiting)
	dataFiles, err := filepath.Glob(filepath.Join(env.Config.DataDir, "copilot.db*"))
	require.NoError(t, err)
	require.NotEmpty(t, dataFiles)
	for _, f := range dataFiles {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.False(t, bytes.Contains(b, []byte(key)), "%s holds the key in clear", f)
	}
	_, deleted := callTool(t, c, "decide_approval", map[string]any{"approval_id": res.Meta["approval_id"], "decision": "approve"}, nil)
	require.True(t, deleted.Success, "%+v", deleted)
	_, still := env.GNS3.Node(node.ID)
	require.False(t, still, "the node was deleted with the key")

	requireSecretsNotInHistory(t, closedHistory(t, env, workflows.WorkflowID(started.SessionID, started.TurnID)), 10, key)
	requireSecretsNotInHistory(t, closedHistory(t, env, res.Meta["workflow_id"].(string)), 5, key)
	require.NotContains(t, env.Logs(), key)
	require.Contains(t, env.Logs(), started.TurnID, "the log was captured")

	// Revoked in GNS3: refused by the chat API and by MCP within the cache's lifetime.
	env.GNS3.RevokeAPIKey(key)
	revoked := time.Now()
	require.Eventually(t, func() bool {
		code, _ := env.DoAs(key, http.MethodGet, env.ChatPath("/sessions"), nil)
		return code == http.StatusUnauthorized
	}, cacheTTL+5*time.Second, 50*time.Millisecond)
	took := time.Since(revoked)
	require.LessOrEqual(t, took, cacheTTL+time.Second, "refused %s after the revocation", took)
	t.Logf("a revoked API key was refused %s after its revocation (token cache %s)", took.Round(10*time.Millisecond), cacheTTL)
	_, err = connectMCP(t, env, key, "")
	require.Error(t, err, "a new MCP session with the revoked key")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.ListTools(ctx, nil)
	require.Error(t, err, "the open MCP session with the revoked key")
}

// In front of GNS3, the copilot passes GNS3 3.1's token refresh through as it came.
func TestTheTokenRefreshReachesGNS3Unchanged(t *testing.T) {
	env := e2eenv.Start(t, e2eenv.Options{ProxyGNS3: true})
	refresh := env.GNS3.IssueRefreshToken(e2eenv.Username)
	body := `{"refresh_token": "` + refresh + `"}`
	req, err := http.NewRequest(http.MethodPost, env.URL+"/v3/access/users/refresh", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e2eenv.UserToken)
	// GNS3's own route, not the copilot's: outside the copilot's OpenAPI document.
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, e2eenv.UserToken, out.AccessToken)
	got := env.GNS3.LastRefresh()
	require.Equal(t, fakegns3.RefreshRequest{Body: body, Authorization: "Bearer " + e2eenv.UserToken, ContentType: "application/json"}, got)
}
