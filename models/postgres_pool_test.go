package models

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

// Many more concurrent queries than the pool holds all succeed, on at most PostgresMaxConns
// connections, which stay open for the next burst instead of being closed and forked again.
func TestPostgresBurstStaysWithinItsPool(t *testing.T) {
	db := testdb.PostgresWith(t, Open)
	sqlDB, err := db.DB()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 4*PostgresMaxConns)
	for range 4 * PostgresMaxConns {
		wg.Go(func() { errs <- db.WithContext(ctx).Exec("SELECT pg_sleep(0.05)").Error })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st := sqlDB.Stats()
	require.Equal(t, PostgresMaxConns, st.MaxOpenConnections)
	require.Equal(t, PostgresMaxConns, st.OpenConnections, "the burst's connections are kept")
	require.Positive(t, st.WaitCount, "queries beyond the pool waited for a connection")
	require.Zero(t, st.MaxIdleClosed, "no connection was closed for want of an idle slot")
}
