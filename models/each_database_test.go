package models

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

// onEachDatabase runs fn on a migrated SQLite database and on a migrated PostgreSQL one, as
// subtests: the repositories' conditional writes differ between the two dialects, so the
// behaviours that depend on them are checked on both.
func onEachDatabase(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	for name, open := range map[string]func(*testing.T) *gorm.DB{
		"sqlite":   func(t *testing.T) *gorm.DB { return testdb.SQLiteWith(t, Open) },
		"postgres": func(t *testing.T) *gorm.DB { return testdb.PostgresWith(t, Open) },
	} {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			require.NoError(t, Migrate(db))
			fn(t, db)
		})
	}
}
