package models

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// PostgresMaxConns is how many PostgreSQL connections one copilot process holds at most: the
// scaled-out layout's four processes then take 40 of PostgreSQL's default max_connections of
// 100, beside Temporal's 30 (scripts/temporal-cluster/config/cluster.yaml) on the same server.
const PostgresMaxConns = 10

// Open connects to the database named by databaseURL: a postgres:// or postgresql:// URL (or a
// key=value DSN containing "host="), an explicit "sqlite:" path, or — when empty — a SQLite file
// in dataDir. SQLite runs in WAL mode with a busy timeout so the API and worker of one process
// can write concurrently; reads of a file database do not wait for writes (see sqlitePool).
func Open(databaseURL, dataDir string) (*gorm.DB, error) {
	// A single INSERT, UPDATE or DELETE is atomic by itself: GORM's default transaction around
	// each (no model here has hooks or associations that would add statements) only added a
	// BEGIN and a COMMIT to every one, four times in each new chat. Several statements that must
	// hold together run in a Transaction of their own.
	cfg := &gorm.Config{Logger: logger.Default.LogMode(logger.Silent), TranslateError: true, SkipDefaultTransaction: true}
	switch {
	case IsPostgres(databaseURL):
		db, err := gorm.Open(postgres.Open(databaseURL), cfg)
		if err != nil {
			return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
		}
		sqlDB, err := db.DB()
		if err != nil {
			return nil, err
		}
		// database/sql's defaults (no limit on open connections, two kept idle) fail a burst of
		// turns: every query beyond two forks a new PostgreSQL backend, and a class pressing
		// Enter together opened more than max_connections (100 by default, shared by every
		// copilot process and Temporal), so users got "too many clients". A fixed pool that
		// keeps its connections queues the queries in Go instead.
		sqlDB.SetMaxOpenConns(PostgresMaxConns)
		sqlDB.SetMaxIdleConns(PostgresMaxConns)
		return db, nil
	default:
		path := SQLitePath(databaseURL, dataDir)
		if path == "" {
			return nil, fmt.Errorf("no database URL and no data directory given")
		}
		if strings.TrimPrefix(databaseURL, "sqlite:") == "" {
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				return nil, fmt.Errorf("creating data directory: %w", err)
			}
		}
		params := "_busy_timeout=10000&_foreign_keys=on"
		dsn := path + "?_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&" + params
		dialector := sqlite.Open(dsn)
		var pool *sqlitePool
		if splitsReads(path) {
			// WAL mode is a property of the file, which the writer sets; the readers need only
			// refuse to write, so that a write routed to them by mistake fails loudly.
			var err error
			if pool, err = openSQLitePool(dsn, path+"?_query_only=on&"+params); err != nil {
				return nil, fmt.Errorf("opening SQLite database %s: %w", path, err)
			}
			dialector = sqlite.New(sqlite.Config{DSN: dsn, Conn: pool})
		}
		db, err := gorm.Open(dialector, cfg)
		if err != nil {
			if pool != nil {
				_ = pool.writer.Close()
			}
			return nil, fmt.Errorf("opening SQLite database %s: %w", path, err)
		}
		if pool == nil {
			sqlDB, err := db.DB()
			if err != nil {
				return nil, err
			}
			// One writer at a time, queued in Go: see openSQLitePool.
			sqlDB.SetMaxOpenConns(1)
		}
		return db, nil
	}
}

// SQLitePath is the SQLite database Open uses for databaseURL and dataDir: the explicit
// "sqlite:" path, else copilot.db in dataDir; "" when there is neither. It means nothing for a
// PostgreSQL URL (IsPostgres).
func SQLitePath(databaseURL, dataDir string) string {
	if path := strings.TrimPrefix(databaseURL, "sqlite:"); path != "" {
		return path
	}
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, "copilot.db")
}

// splitsReads reports whether a SQLite database at path gets read-only connections beside its
// writer. Only a plain file does: a second pool on a private in-memory database would open a
// different, empty database, and a file: URI may name one (mode=memory).
func splitsReads(path string) bool {
	return path != ":memory:" && !strings.HasPrefix(path, "file:")
}

// IsPostgres reports whether Open takes databaseURL for PostgreSQL; anything else is SQLite.
func IsPostgres(databaseURL string) bool {
	return strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") ||
		strings.Contains(databaseURL, "host=")
}

// first loads the first row q finds, or ErrNotFound. Like the lookups it replaces, it returns
// the (empty) row along with any other error.
func first[T any](q *gorm.DB) (*T, error) {
	var v T
	err := q.First(&v).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &v, err
}

// updateWhile applies upd to the row of model's table with id while its status is still status:
// a row that has moved on (decided, finished, ended) keeps what it has. RowsAffected of the
// answer tells whether it was still in that status.
func updateWhile(ctx context.Context, db *gorm.DB, model any, id, status string, upd map[string]any) *gorm.DB {
	return db.WithContext(ctx).Model(model).Where("id = ? AND status = ?", id, status).Updates(upd)
}

// Migrate creates or upgrades every table the copilot owns. It is idempotent.
func Migrate(db *gorm.DB) error {
	if err := db.AutoMigrate(&ChatSession{}, &ChatTurn{}, &ChatMessage{}, &UserTokenUsage{}); err != nil {
		return fmt.Errorf("migrating chat tables: %w", err)
	}
	// A partial unique index is what makes "one running turn per session" hold across API
	// instances: the second concurrent insert fails instead of racing past a SELECT.
	if err := db.Exec(`CREATE UNIQUE INDEX IF NOT EXISTS idx_one_running_turn ON chat_turns (session_id) WHERE status = 'running'`).Error; err != nil {
		return fmt.Errorf("creating running-turn index: %w", err)
	}
	if err := db.Exec(`CREATE UNIQUE INDEX IF NOT EXISTS idx_turn_seq ON chat_turns (session_id, seq)`).Error; err != nil {
		return fmt.Errorf("creating turn sequence index: %w", err)
	}
	// The per-user limit counts a user's running turns at every turn's start: without this index
	// that count read every turn ever taken (a class's term is tens of thousands). Partial, it
	// holds only the turns running now; a query uses it only when it names the status as this
	// literal, not as a bound parameter (runningTurnsOfUser).
	if err := db.Exec(`CREATE INDEX IF NOT EXISTS idx_running_turns_of_user ON chat_turns (user_id) WHERE status = 'running'`).Error; err != nil {
		return fmt.Errorf("creating running-turns-of-user index: %w", err)
	}
	if err := backfillSessionModes(db); err != nil {
		return fmt.Errorf("recording the copilot mode of older sessions: %w", err)
	}
	if err := MigrateDeviceCommands(db); err != nil {
		return fmt.Errorf("migrating device commands: %w", err)
	}
	if err := MigrateApprovals(db); err != nil {
		return fmt.Errorf("migrating approvals: %w", err)
	}
	if err := MigrateExercises(db); err != nil {
		return fmt.Errorf("migrating exercises: %w", err)
	}
	if err := MigrateTopologyMarks(db); err != nil {
		return fmt.Errorf("migrating topology marks: %w", err)
	}
	if err := MigrateSavePoints(db); err != nil {
		return fmt.Errorf("migrating save points: %w", err)
	}
	if err := MigrateMCPCalls(db); err != nil {
		return fmt.Errorf("migrating MCP calls: %w", err)
	}
	return MigrateLLMConfigs(db)
}
