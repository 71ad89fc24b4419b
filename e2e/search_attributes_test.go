package e2e

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// A Temporal cluster where nobody registered the copilot's search attributes (one set up by
// hand, without scripts/temporal-cluster/setup.sh) still runs turns: the API starts them again
// without the attributes.
func TestTurnsRunOnAClusterWithoutTheSearchAttributes(t *testing.T) {
	cli := e2eenv.RequireTemporalCLI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	cmd := exec.Command(cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--db-filename", filepath.Join(t.TempDir(), "temporal.db"), "--log-level", "error")
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	require.Eventually(t, func() bool {
		c, err := client.Dial(client.Options{HostPort: addr})
		if err != nil {
			return false
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "the bare dev server did not come up")

	env := e2eenv.Start(t, e2eenv.Options{TemporalAddress: addr, Approval: "changes"})
	env.LLM.SetHandler(titleReplies("Bare cluster"))
	env.LLM.Enqueue(fakeopenai.Text("Still here."))
	frames := env.OpenStream(http.MethodPost, env.ChatPath("/stream"), map[string]any{"message": "hello"}, "").UntilDone(t, true)
	require.Equal(t, "completed", frames[len(frames)-1].Data["status"], "%v", e2eenv.Types(frames))
	// It ran without them: the cluster refused the first start, the second had none.
	sessionID, turnID := startedIDs(t, frames)
	desc, err := env.Service.Temporal().DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(sessionID, turnID), "")
	require.NoError(t, err)
	fields := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
	require.NotContains(t, fields, "ProjectId")
	require.NotContains(t, fields, "SessionId")
}
