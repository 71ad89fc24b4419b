package activities

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gns3-copilot/gns3-copilot/internal/credentials"
	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/tools"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/relay"
	"github.com/gns3-copilot/gns3-copilot/models"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// final reports whether Temporal would give up on err at once.
func final(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.NonRetryable()
}

// A credential store that fails to answer is retried; only a credential that is gone, or that
// another key sealed, is final. The failure is real: the credentials table is renamed away
// under the store, as a database in the middle of a failover answers.
func TestPassingCredentialErrorsAreRetriedOnlyGoneIsFinal(t *testing.T) {
	db, err := models.Open("sqlite:"+filepath.Join(t.TempDir(), "t.db"), "")
	require.NoError(t, err)
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{7}, credentials.KeySize))
	require.NoError(t, err)
	store, err := credentials.NewDBStore(db, sealer)
	require.NoError(t, err)
	events := relay.NewMemory(relay.MemoryOptions{})
	defer events.Close()
	a := &Activities{Credentials: store, Events: events, GNS3: gns3.NewServer("http://127.0.0.1:9", time.Second)}
	ctx := context.Background()
	in := workflows.ToolInput{Turn: workflows.WorkRef{TurnID: "turn-1", SessionID: "s", Mode: string(tools.TeachingAssistant)},
		Call: workflows.ToolCall{ID: "c", Name: "get_gns3_topology", Arguments: "{}"}}
	require.NoError(t, store.Put(ctx, "turn-1", "token", time.Hour))

	require.NoError(t, db.Exec(`ALTER TABLE turn_credentials RENAME TO turn_credentials_away`).Error)
	_, _, err = a.startTool(ctx, in)
	require.Error(t, err)
	require.False(t, final(err), "a store that did not answer is retried: %v", err)

	require.NoError(t, db.Exec(`ALTER TABLE turn_credentials_away RENAME TO turn_credentials`).Error)
	_, _, err = a.startTool(ctx, in)
	require.NoError(t, err, "the next attempt reads the credential")

	require.NoError(t, store.Delete(ctx, "turn-1"))
	_, _, err = a.startTool(ctx, in)
	require.True(t, final(err), "a credential that is gone is final: %v", err)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae))
	require.Equal(t, domain.ErrTypeNoCredentials, ae.Type())

	// Sealed under another key: bad configuration, final.
	other, err := credentials.NewSealer(bytes.Repeat([]byte{9}, credentials.KeySize))
	require.NoError(t, err)
	otherStore, err := credentials.NewDBStore(db, other)
	require.NoError(t, err)
	require.NoError(t, otherStore.Put(ctx, "turn-1", "token", time.Hour))
	_, _, err = a.startTool(ctx, in)
	require.True(t, final(err), "a credential sealed under another key is final: %v", err)
}

// An LLM configuration that is missing or unusable is final; a database error reading it is not.
func TestPassingLLMConfigErrorsAreRetried(t *testing.T) {
	require.True(t, final(llmSettingsError(llmconfig.ErrNotConfigured)))
	require.True(t, final(llmSettingsError(&llmconfig.BadConfigError{Msg: "deleted"})))
	require.False(t, final(llmSettingsError(errors.New("reading LLM configuration x: driver: bad connection"))))
}
