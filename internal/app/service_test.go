package app

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitHalvesNeedTemporalAndRedis(t *testing.T) {
	for _, role := range []Role{RoleAPI, RoleWorker} {
		_, err := Start(context.Background(), role, Config{DataDir: t.TempDir()})
		require.ErrorContains(t, err, "--temporal-address")
		_, err = Start(context.Background(), role, Config{DataDir: t.TempDir(), TemporalAddress: "127.0.0.1:7233"})
		require.ErrorContains(t, err, "--redis-url")
	}
}

func TestUnknownLogFormatIsRefusedClearly(t *testing.T) {
	_, err := Start(context.Background(), RoleServe, Config{DataDir: t.TempDir(), LogFormat: "xml"})
	require.ErrorContains(t, err, `--log-format must be json or text, got "xml"`)
}
