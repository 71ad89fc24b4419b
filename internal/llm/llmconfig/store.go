package llmconfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/credentials"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/contextwindow"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/egress"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// Sealer encrypts API keys at rest; *credentials.Sealer is the one the service uses.
type Sealer interface {
	Seal(plaintext, associatedData []byte) (string, error)
	Open(sealed string, associatedData []byte) ([]byte, error)
}

// Owner is whose configuration it is: a GNS3 user or a GNS3 group.
type Owner struct {
	Type string // models.OwnerUser or models.OwnerGroup
	ID   string
}

// UserOwner is the owner value of a user's configurations.
func UserOwner(userID string) Owner { return Owner{Type: models.OwnerUser, ID: userID} }

// GroupOwner is the owner value of a group's configurations.
func GroupOwner(groupID string) Owner { return Owner{Type: models.OwnerGroup, ID: groupID} }

// Store keeps LLM configurations in the database, keys sealed, and decides which one a user's
// turn runs with. It is the Loader of the worker and the chooser of the API.
type Store struct {
	repo   *models.LLMConfigRepository
	sealer Sealer
	def    *Settings
	log    *slog.Logger
	egress *egress.Policy
	groups groupCache // the groups of users starting turns (groups_cache.go)
}

// NewStore returns a store on db (migrated with models.MigrateLLMConfigs). sealer encrypts the
// keys; serverDefault is the operator's configuration from the environment, or nil.
func NewStore(db *gorm.DB, sealer Sealer, serverDefault *Settings) *Store {
	if sp, ok := sealer.(*credentials.Sealer); ok && sp == nil {
		sealer = nil // a nil *Sealer in the interface would pass the nil checks and then panic
	}
	if serverDefault != nil && (serverDefault.BaseURL == "" || serverDefault.Model == "") {
		serverDefault = nil
	}
	if serverDefault != nil {
		d := *serverDefault
		d.ConfigID = ""
		d.Trusted = true // the operator's own
		serverDefault = &d
	}
	strict, _ := egress.New(nil, false)
	return &Store{repo: models.NewLLMConfigRepository(db), sealer: sealer, def: serverDefault, log: slog.Default(), egress: strict}
}

// WithEgress sets the outbound policy regular users' endpoints are checked against when saved;
// without it only public addresses pass.
func (s *Store) WithEgress(p *egress.Policy) *Store {
	if p != nil {
		s.egress = p
	}
	return s
}

// checkEndpoint decides whether c's endpoint is trusted after a write (trust follows whoever
// last set the endpoint), and refuses an untrusted one the outbound policy can already tell is
// off limits. oldURL is the base URL before the write.
func (s *Store) checkEndpoint(c *models.LLMModelConfig, ch Change, oldURL string, creating bool) error {
	switch {
	case c.OwnerType == models.OwnerGroup:
		c.EndpointTrusted = true // only superadmins write them
	case creating || c.BaseURL != oldURL:
		c.EndpointTrusted = ch.WriterIsSuperadmin
	case ch.WriterIsSuperadmin && (ch.BaseURL != nil || ch.Provider != nil):
		c.EndpointTrusted = true
	}
	if c.EndpointTrusted {
		return nil
	}
	if err := s.egress.CheckURL(c.BaseURL); err != nil {
		return &ValidationError{Problems: []string{fmt.Sprintf("base_url %s cannot be used: %v. "+
			"Configurations saved by regular users may only reach public addresses; the operator can allow this host "+
			"(--llm-allow-hosts), or a GNS3 superadmin can save the configuration", c.BaseURL, err)}}
	}
	return nil
}

// WithLogger sets where the store reports what it skipped (a group list GNS3 would not give).
func (s *Store) WithLogger(l *slog.Logger) *Store {
	if l != nil {
		s.log = l
	}
	return s
}

// Repository gives the API read access to the rows.
func (s *Store) Repository() *models.LLMConfigRepository { return s.repo }

// ServerDefault is the operator's default without its key, and whether there is one.
func (s *Store) ServerDefault() (Settings, bool) {
	if s.def == nil {
		return Settings{}, false
	}
	d := *s.def
	d.APIKey = ""
	return d, true
}

// associatedData binds a sealed key to its row: copied into another row it does not open.
func associatedData(id string) []byte { return []byte("llm_model_configs/" + id) }

func (s *Store) seal(c *models.LLMModelConfig, key *string) error {
	if key == nil {
		return nil
	}
	if *key == "" {
		c.APIKeySealed, c.APIKeyHint = "", ""
		return nil
	}
	if s.sealer == nil {
		return errors.New("no encryption key is configured, so API keys cannot be stored")
	}
	sealed, err := s.sealer.Seal([]byte(*key), associatedData(c.ID))
	if err != nil {
		return fmt.Errorf("encrypting the API key: %w", err)
	}
	c.APIKeySealed, c.APIKeyHint = sealed, keyHint(*key)
	return nil
}

// Create validates and stores a new configuration of owner. An owner's first configuration
// becomes its default unless the request says is_default false.
func (s *Store) Create(ctx context.Context, owner Owner, ch Change) (*models.LLMModelConfig, error) {
	c := &models.LLMModelConfig{ID: uuid.NewString(), OwnerType: owner.Type, OwnerID: owner.ID,
		Temperature: DefaultTemperature, ContextLimit: contextwindow.DefaultContextLimitK}
	key, err := applyChange(c, ch, true)
	if err != nil {
		return nil, err
	}
	if err := s.checkEndpoint(c, ch, "", true); err != nil {
		return nil, err
	}
	if err := s.seal(c, key); err != nil {
		return nil, err
	}
	if err := s.repo.Create(ctx, c, ch.IsDefault == nil); err != nil {
		return nil, err
	}
	return c, nil
}

// Update validates and applies ch to owner's configuration id. With expectedVersion, a
// configuration changed since the caller read it is left alone (*models.VersionConflictError).
func (s *Store) Update(ctx context.Context, owner Owner, id string, expectedVersion *int, ch Change) (*models.LLMModelConfig, error) {
	return s.repo.Update(ctx, owner.Type, owner.ID, id, expectedVersion, func(c *models.LLMModelConfig) error {
		oldURL := c.BaseURL
		key, err := applyChange(c, ch, false)
		if err != nil {
			return err
		}
		if err := s.checkEndpoint(c, ch, oldURL, false); err != nil {
			return err
		}
		return s.seal(c, key)
	})
}

// Delete removes owner's configuration id.
func (s *Store) Delete(ctx context.Context, owner Owner, id string, expectedVersion *int) error {
	return s.repo.Delete(ctx, owner.Type, owner.ID, id, expectedVersion)
}

// SetDefault makes owner's configuration id the default, in place of the previous one.
func (s *Store) SetDefault(ctx context.Context, owner Owner, id string) (*models.LLMModelConfig, error) {
	return s.repo.Update(ctx, owner.Type, owner.ID, id, nil, func(c *models.LLMModelConfig) error {
		if !chatCapable(c.ModelType) {
			return &ValidationError{Problems: []string{fmt.Sprintf(
				"a %s configuration cannot be the default: the default is what chat turns run with", c.ModelType)}}
		}
		c.IsDefault = true
		return nil
	})
}

// Get returns owner's configuration id (models.ErrNotFound if it is not theirs).
func (s *Store) Get(ctx context.Context, owner Owner, id string) (*models.LLMModelConfig, error) {
	return s.repo.Get(ctx, owner.Type, owner.ID, id)
}

// List returns owner's configurations, oldest first.
func (s *Store) List(ctx context.Context, owner Owner) ([]models.LLMModelConfig, error) {
	return s.repo.List(ctx, owner.Type, owner.ID)
}

// Default returns owner's default configuration, or models.ErrNotFound.
func (s *Store) Default(ctx context.Context, owner Owner) (*models.LLMModelConfig, error) {
	return s.repo.Default(ctx, owner.Type, owner.ID)
}

// ListGroups returns the configurations of the groups, oldest first.
func (s *Store) ListGroups(ctx context.Context, groupIDs []string) ([]models.LLMModelConfig, error) {
	return s.repo.ListGroups(ctx, groupIDs)
}

// Resolve picks the configuration a user's turns run with among stored rows: the user's own
// default (a group configuration when the user chose one as theirs), else the default of the
// first of their groups (in GNS3's order) that has one. nil means neither: the server default
// applies.
func Resolve(own, groupConfigs []models.LLMModelConfig, groupOrder []string) *models.LLMModelConfig {
	for i := range own {
		if !own[i].IsDefault {
			continue
		}
		if own[i].InheritsFrom == "" {
			return &own[i]
		}
		// The user's default is a group configuration they chose: that one, if it still applies.
		for j := range groupConfigs {
			if groupConfigs[j].ID == own[i].InheritsFrom {
				return &groupConfigs[j]
			}
		}
	}
	for _, g := range groupOrder {
		for i := range groupConfigs {
			if groupConfigs[i].OwnerID == g && groupConfigs[i].IsDefault {
				return &groupConfigs[i]
			}
		}
	}
	return nil
}

// Load returns the settings, key decrypted, of the configuration a turn was started with; ""
// is the server default. It runs worker-side only.
func (s *Store) Load(ctx context.Context, configID string) (Settings, error) {
	if configID == "" {
		if s.def == nil {
			return Settings{}, ErrNotConfigured
		}
		return *s.def, nil
	}
	c, err := s.repo.ByID(ctx, configID)
	if errors.Is(err, models.ErrNotFound) {
		return Settings{}, &BadConfigError{Msg: "the LLM configuration this message was sent with (" + configID +
			") has been deleted since; send the message again to use your current configuration"}
	}
	if err != nil {
		return Settings{}, fmt.Errorf("reading LLM configuration %s: %w", configID, err)
	}
	return s.settings(ctx, c)
}

func (s *Store) settings(ctx context.Context, c *models.LLMModelConfig) (Settings, error) {
	if c.InheritsFrom != "" {
		g, err := s.repo.ByID(ctx, c.InheritsFrom)
		if errors.Is(err, models.ErrNotFound) {
			return Settings{}, &BadConfigError{Msg: "the group LLM configuration you chose (" + c.InheritsFrom +
				") has been deleted; choose another configuration"}
		}
		if err != nil {
			return Settings{}, fmt.Errorf("reading LLM configuration %s: %w", c.InheritsFrom, err)
		}
		st, err := s.settings(ctx, g)
		st.ConfigID, st.CopilotMode = c.ID, c.CopilotMode
		return st, err
	}
	t := c.Temperature
	st := Settings{ConfigID: c.ID, Name: c.Name, Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model,
		Temperature: &t, MaxTokens: c.MaxTokens, ContextLimitK: c.ContextLimit, ContextStrategy: c.ContextStrategy,
		CopilotMode: c.CopilotMode, ReasoningEffort: c.ReasoningEffort, Trusted: c.EndpointTrusted || c.OwnerType == models.OwnerGroup}
	if c.APIKeySealed == "" {
		return st, nil
	}
	if s.sealer == nil {
		return Settings{}, &BadConfigError{Msg: fmt.Sprintf("the API key of LLM configuration %q cannot be decrypted: "+
			"this server has no encryption key configured", c.Name)}
	}
	key, err := s.sealer.Open(c.APIKeySealed, associatedData(c.ID))
	if err != nil {
		why := "it is damaged"
		if errors.Is(err, credentials.ErrWrongKey) {
			why = "it was encrypted under another server encryption key (was the key changed?)"
		}
		return Settings{}, &BadConfigError{Msg: fmt.Sprintf("the API key of LLM configuration %q cannot be decrypted: %s; "+
			"enter the api_key of that configuration again", c.Name, why)}
	}
	st.APIKey = string(key)
	return st, nil
}

// Choose decides, when a turn starts, which configuration it runs with: the user's default,
// else a default of one of the user's GNS3 groups, else the server default, else
// ErrNotConfigured. The key is decrypted here too, so a key that cannot be read stops the turn
// before it starts, with a message saying what to do.
func (s *Store) Choose(ctx context.Context, userID string, client *gns3.Client) (Settings, error) {
	// One read of the user's rows serves both their own default and, below, the group
	// configurations they chose.
	rows, err := s.repo.List(ctx, models.OwnerUser, userID)
	if err != nil {
		return Settings{}, fmt.Errorf("reading your LLM configuration: %w", err)
	}
	for i := range rows {
		if rows[i].IsDefault && rows[i].InheritsFrom == "" {
			return s.settings(ctx, &rows[i])
		}
	}
	if client != nil {
		groups, err := s.groupsOf(ctx, client, userID)
		if err != nil {
			return Settings{}, err
		}
		ids := make([]string, len(groups))
		for i, g := range groups {
			ids[i] = strings.ToLower(g.UserGroupID)
		}
		cfgs, err := s.repo.ListGroups(ctx, ids)
		if err != nil {
			return Settings{}, fmt.Errorf("reading your groups' LLM configurations: %w", err)
		}
		// A group configuration the user chose applies while they are still in its group, and so
		// does the mode they chose for their group's default.
		if c := Resolve(rows, cfgs, ids); c != nil {
			if choice := Choices(rows)[c.ID]; choice != nil {
				return s.settings(ctx, choice)
			}
			return s.settings(ctx, c)
		}
	}
	if s.def != nil {
		return *s.def, nil
	}
	return Settings{}, ErrNotConfigured
}

// GroupsOf returns the user's GNS3 groups as the client may see them. A GNS3 that does not let
// the user read their memberships (no Group.Audit privilege) means no group configuration
// applies to them; that is reported as no groups, not as a failure. Every fresh read also
// refreshes the turn-time cache, so what a user sees on the settings routes is what their next
// turn uses.
func (s *Store) GroupsOf(ctx context.Context, client *gns3.Client, userID string) ([]gns3.Group, bool, error) {
	groups, err := client.UserGroups(ctx, userID)
	if errors.Is(err, gns3.ErrForbidden) {
		s.rememberGroups(client, userID, nil, false)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the user's GNS3 groups: %w", err)
	}
	s.rememberGroups(client, userID, groups, true)
	return groups, true, nil
}

func (s *Store) groupsOf(ctx context.Context, client *gns3.Client, userID string) ([]gns3.Group, error) {
	groups, visible, err := s.cachedGroupsOf(ctx, client, userID)
	if err == nil && !visible {
		s.log.Info("GNS3 does not let this user read their group memberships; group LLM configurations do not apply", "user_id", userID)
	}
	return groups, err
}
