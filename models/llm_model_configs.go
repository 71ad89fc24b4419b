package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Owners of an LLM model configuration.
const (
	OwnerUser  = "user"
	OwnerGroup = "group"
)

// LLMModelConfig is one saved LLM configuration of a GNS3 user or group. The API key is stored
// only sealed (AES-GCM, bound to the row's id); APIKeyHint is the few characters a person needs
// to recognise which key is set, never enough to use it.
type LLMModelConfig struct {
	ID              string  `gorm:"primaryKey;size:36"`
	OwnerType       string  `gorm:"size:8;not null;index:idx_llm_owner,priority:1;check:chk_llm_owner_type,owner_type IN ('user','group')"`
	OwnerID         string  `gorm:"size:64;not null;index:idx_llm_owner,priority:2"`
	Name            string  `gorm:"size:100;not null"`
	ModelType       string  `gorm:"size:32;not null"`
	Provider        string  `gorm:"size:32;not null"`
	BaseURL         string  `gorm:"size:2048;not null"`
	Model           string  `gorm:"size:200;not null"`
	Temperature     float64 `gorm:"not null"`
	APIKeySealed    string  `gorm:"type:text;not null;default:''"` // "" when no key is set
	APIKeyHint      string  `gorm:"size:32;not null;default:''"`
	MaxTokens       int     `gorm:"not null;default:0"` // 0: the provider's own limit
	ContextLimit    int     `gorm:"not null"`           // thousands of tokens
	ContextStrategy string  `gorm:"size:16;not null"`
	CopilotMode     string  `gorm:"size:32;not null"`
	// ReasoningEffort is how much a thinking model thinks (off, low, medium, high, max), "" for
	// the provider's default.
	ReasoningEffort string `gorm:"size:16;not null;default:''"`
	IsDefault       bool   `gorm:"not null;default:false"`
	// EndpointTrusted is set when a GNS3 superadmin wrote the endpoint (group configurations
	// always are): only then may it reach the copilot server's own network.
	EndpointTrusted bool `gorm:"not null;default:false"`
	// Extra holds the fields a client added that the copilot does not use, as a JSON object;
	// the reference keeps them in the configuration, and GNS3's web UI lets users add them.
	Extra string `gorm:"type:text;not null;default:'{}'"`
	// InheritsFrom, on a user's row, is the id of a group configuration the user chose through
	// their own routes (as their default, or with a copilot mode of their own). Such a row is the
	// user's choice, not a configuration: its model settings are the group configuration's.
	InheritsFrom string `gorm:"size:36;not null;default:''"`
	// Version counts changes, for optimistic locking: an update names the version it read.
	Version   int `gorm:"not null;default:0"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName keeps the reference implementation's table name.
func (LLMModelConfig) TableName() string { return "llm_model_configs" }

// VersionConflictError is an update or delete of a configuration that changed since the caller
// read it.
type VersionConflictError struct {
	Current  int
	Expected int
}

func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("the configuration is at version %d, not %d: it was changed since it was read", e.Current, e.Expected)
}

// MigrateLLMConfigs creates or upgrades the llm_model_configs table. It is idempotent. The
// partial unique index is what guarantees one default per owner, whatever the requests race.
func MigrateLLMConfigs(db *gorm.DB) error {
	if err := db.AutoMigrate(&LLMModelConfig{}); err != nil {
		return fmt.Errorf("migrating llm_model_configs: %w", err)
	}
	if err := db.Exec(`CREATE UNIQUE INDEX IF NOT EXISTS idx_llm_one_default ON llm_model_configs (owner_type, owner_id) WHERE is_default`).Error; err != nil {
		return fmt.Errorf("creating the one-default-per-owner index: %w", err)
	}
	if err := db.Exec(`CREATE UNIQUE INDEX IF NOT EXISTS idx_llm_one_choice ON llm_model_configs (owner_type, owner_id, inherits_from) WHERE inherits_from <> ''`).Error; err != nil {
		return fmt.Errorf("creating the one-choice-per-group-configuration index: %w", err)
	}
	return nil
}

// LLMConfigRepository reads and writes LLM configurations. Every call that acts on one
// configuration names its owner too, so a configuration of someone else is simply not found.
type LLMConfigRepository struct {
	DB  *gorm.DB
	Now func() time.Time
}

// NewLLMConfigRepository returns a repository using the wall clock.
func NewLLMConfigRepository(db *gorm.DB) *LLMConfigRepository {
	return &LLMConfigRepository{DB: db, Now: func() time.Time { return time.Now().UTC() }}
}

// now is truncated to what PostgreSQL stores, so a row read back equals the one written.
func (r *LLMConfigRepository) now() time.Time { return r.Now().UTC().Truncate(time.Microsecond) }

// defaultRetries bounds the retries of a transaction that lost a race for the default flag: on
// PostgreSQL two concurrent "make X the default" can both pass their own UPDATE and one then
// fails on the unique index; run again, it sees the winner and clears it.
const defaultRetries = 5

func (r *LLMConfigRepository) retry(ctx context.Context, fn func(tx *gorm.DB) error) error {
	var err error
	for i := 0; i < defaultRetries; i++ {
		err = r.DB.WithContext(ctx).Transaction(fn)
		if !lostRace(err) {
			return err
		}
	}
	return err
}

// lostRace recognises a unique-index failure (also on a connection opened without GORM's
// error translation) and a deadlock, which PostgreSQL resolves by failing one of the parties.
func lostRace(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return errors.Is(err, gorm.ErrDuplicatedKey) || strings.Contains(msg, "UNIQUE constraint failed") ||
		strings.Contains(msg, "SQLSTATE 23505") || strings.Contains(msg, "SQLSTATE 40P01")
}

// lockOwner locks all of the owner's rows, always in id order, before a transaction changes any:
// writers of one owner then take turns instead of deadlocking over each other's default flags.
// (SQLite has no row locks; its immediate transactions already take turns.)
func lockOwner(tx *gorm.DB, ownerType, ownerID string) error {
	var ids []string
	return tx.Model(&LLMModelConfig{}).Clauses(clause.Locking{Strength: "UPDATE"}).
		Where("owner_type = ? AND owner_id = ?", ownerType, ownerID).Order("id").Pluck("id", &ids).Error
}

// clearDefault unsets the owner's default except keep, bumping the version of the row it changes.
func (r *LLMConfigRepository) clearDefault(tx *gorm.DB, ownerType, ownerID, keep string, now time.Time) error {
	return tx.Model(&LLMModelConfig{}).
		Where("owner_type = ? AND owner_id = ? AND is_default AND id <> ?", ownerType, ownerID, keep).
		Updates(map[string]any{"is_default": false, "version": gorm.Expr("version + 1"), "updated_at": now}).Error
}

// Create stores a new configuration. If it is the default, the owner's previous default stops
// being one in the same transaction. With defaultIfFirst, the owner's first configuration
// becomes the default, so a user who saves one configuration gets it used.
func (r *LLMConfigRepository) Create(ctx context.Context, c *LLMModelConfig, defaultIfFirst bool) error {
	now := r.now()
	wantDefault := c.IsDefault
	return r.retry(ctx, func(tx *gorm.DB) error {
		if err := lockOwner(tx, c.OwnerType, c.OwnerID); err != nil {
			return err
		}
		c.IsDefault = wantDefault
		if !c.IsDefault && defaultIfFirst {
			var n int64
			if err := tx.Model(&LLMModelConfig{}).Where("owner_type = ? AND owner_id = ?", c.OwnerType, c.OwnerID).Count(&n).Error; err != nil {
				return err
			}
			c.IsDefault = n == 0
		}
		if c.IsDefault {
			if err := r.clearDefault(tx, c.OwnerType, c.OwnerID, c.ID, now); err != nil {
				return err
			}
		}
		c.Version, c.CreatedAt, c.UpdatedAt = 0, now, now
		return tx.Create(c).Error
	})
}

// Get returns the owner's configuration id, or ErrNotFound.
func (r *LLMConfigRepository) Get(ctx context.Context, ownerType, ownerID, id string) (*LLMModelConfig, error) {
	return r.get(r.DB.WithContext(ctx), ownerType, ownerID, id)
}

func (r *LLMConfigRepository) get(db *gorm.DB, ownerType, ownerID, id string) (*LLMModelConfig, error) {
	var c LLMModelConfig
	err := db.Where("id = ? AND owner_type = ? AND owner_id = ?", id, ownerType, ownerID).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &c, err
}

// ByID returns a configuration whoever owns it; only worker-side code, which was handed the id
// by a turn the API started, uses it.
func (r *LLMConfigRepository) ByID(ctx context.Context, id string) (*LLMModelConfig, error) {
	var c LLMModelConfig
	err := r.DB.WithContext(ctx).Where("id = ?", id).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &c, err
}

// List returns the owner's configurations, oldest first.
func (r *LLMConfigRepository) List(ctx context.Context, ownerType, ownerID string) ([]LLMModelConfig, error) {
	// Every turn a user starts reads their configurations (to find the one it runs with), so
	// this is written by hand (internal/sqlstmt) rather than built by GORM each time.
	rows, err := configsOfOwner.Query(ctx, r.DB, ownerType, ownerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []LLMModelConfig{}
	for rows.Next() {
		var c LLMModelConfig
		if err := rows.Scan(llmConfigFields(&c)...); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ListGroups returns the configurations of the groups, oldest first.
func (r *LLMConfigRepository) ListGroups(ctx context.Context, groupIDs []string) ([]LLMModelConfig, error) {
	out := []LLMModelConfig{}
	if len(groupIDs) == 0 {
		return out, nil
	}
	err := r.DB.WithContext(ctx).Where("owner_type = ? AND owner_id IN ?", OwnerGroup, groupIDs).
		Order("created_at").Order("id").Find(&out).Error
	return out, err
}

// Default returns the owner's default configuration, or ErrNotFound.
func (r *LLMConfigRepository) Default(ctx context.Context, ownerType, ownerID string) (*LLMModelConfig, error) {
	var c LLMModelConfig
	err := r.DB.WithContext(ctx).Where("owner_type = ? AND owner_id = ? AND is_default", ownerType, ownerID).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &c, err
}

// Update applies change to the owner's configuration id and bumps its version. With
// expectedVersion set, a configuration at another version is left alone and a
// *VersionConflictError returned. change may refuse with an error, which is returned as is.
// A configuration that becomes the default takes the flag from the owner's previous default.
func (r *LLMConfigRepository) Update(ctx context.Context, ownerType, ownerID, id string, expectedVersion *int,
	change func(*LLMModelConfig) error) (*LLMModelConfig, error) {
	var out *LLMModelConfig
	err := r.retry(ctx, func(tx *gorm.DB) error {
		if err := lockOwner(tx, ownerType, ownerID); err != nil {
			return err
		}
		c, err := r.get(tx, ownerType, ownerID, id)
		if err != nil {
			return err
		}
		if expectedVersion != nil && *expectedVersion != c.Version {
			return &VersionConflictError{Current: c.Version, Expected: *expectedVersion}
		}
		read := c.Version
		if err := change(c); err != nil {
			return err
		}
		now := r.now()
		if c.IsDefault {
			if err := r.clearDefault(tx, ownerType, ownerID, id, now); err != nil {
				return err
			}
		}
		c.ID, c.OwnerType, c.OwnerID = id, ownerType, ownerID
		c.Version, c.UpdatedAt = read+1, now
		// The version in the WHERE clause makes the update atomic without a lock: a writer that
		// got in between leaves no row to match.
		res := tx.Model(&LLMModelConfig{}).Where("id = ? AND version = ?", id, read).Select("*").Omit("id", "created_at").Updates(c)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return &VersionConflictError{Current: read + 1, Expected: read}
		}
		out = c
		return nil
	})
	return out, err
}

// SetDefault makes the owner's configuration id the owner's default.
func (r *LLMConfigRepository) SetDefault(ctx context.Context, ownerType, ownerID, id string) (*LLMModelConfig, error) {
	return r.Update(ctx, ownerType, ownerID, id, nil, func(c *LLMModelConfig) error {
		c.IsDefault = true
		return nil
	})
}

// Delete removes the owner's configuration id (checking its version when expectedVersion is
// set). Deleting the default leaves the owner without one: the next in line (a group default,
// the server default) applies, as the user who deleted it would expect.
func (r *LLMConfigRepository) Delete(ctx context.Context, ownerType, ownerID, id string, expectedVersion *int) error {
	return r.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		c, err := r.get(tx, ownerType, ownerID, id)
		if err != nil {
			return err
		}
		if expectedVersion != nil && *expectedVersion != c.Version {
			return &VersionConflictError{Current: c.Version, Expected: *expectedVersion}
		}
		res := tx.Where("id = ? AND version = ?", id, c.Version).Delete(&LLMModelConfig{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return &VersionConflictError{Current: c.Version + 1, Expected: c.Version}
		}
		return nil
	})
}
