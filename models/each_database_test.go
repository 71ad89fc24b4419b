package models

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/testdb"
)

// testDatabases opens an empty database of each dialect, by subtest name: the repositories'
// conditional writes differ between the two, so the behaviours that depend on them are
// checked on both.
var testDatabases = map[string]func(*testing.T) *gorm.DB{
	"sqlite":   func(t *testing.T) *gorm.DB { return testdb.SQLiteWith(t, Open) },
	"postgres": func(t *testing.T) *gorm.DB { return testdb.PostgresWith(t, Open) },
}

// onEachDatabase runs fn on a migrated SQLite database and on a migrated PostgreSQL one, as
// subtests.
func onEachDatabase(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	for name, open := range testDatabases {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			require.NoError(t, Migrate(db))
			fn(t, db)
		})
	}
}

// forEachChatDB is onEachDatabase for the chat repository's tests.
func forEachChatDB(t *testing.T, run func(t *testing.T, repo *ChatRepository)) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) { run(t, NewChatRepository(db)) })
}
