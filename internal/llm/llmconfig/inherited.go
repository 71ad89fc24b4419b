package llmconfig

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// A user inherits the configurations of their GNS3 groups. GNS3's web UI lets the user pick one
// of them as the model their chats use, or switch its copilot mode, through the user's own
// routes. The group configuration itself stays the group's (only a superadmin changes it); the
// user's pick is a row of the user's that points at it (models.LLMModelConfig.InheritsFrom) and
// holds what is the user's to choose: whether it is their default, and the copilot mode.

// Inherited is a group configuration as one user sees it: with their choice applied, if any.
type Inherited struct {
	Config    *models.LLMModelConfig // the group's row; IsDefault and CopilotMode are the user's view
	GroupName string
	Choice    *models.LLMModelConfig // the user's row pointing at it, nil when they made no choice
}

// InheritedConfig finds configuration id among the configurations userID inherits from their
// groups (as client may see them), with the user's choice applied; models.ErrNotFound when it is
// not one of them.
func (s *Store) InheritedConfig(ctx context.Context, client *gns3.Client, userID, id string) (*Inherited, error) {
	groups, _, err := s.GroupsOf(ctx, client, userID)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	ids := make([]string, len(groups))
	for i, g := range groups {
		ids[i] = strings.ToLower(g.UserGroupID)
		names[ids[i]] = g.Name
	}
	cfgs, err := s.repo.ListGroups(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range cfgs {
		if cfgs[i].ID != id {
			continue
		}
		in := &Inherited{Config: &cfgs[i], GroupName: names[cfgs[i].OwnerID]}
		choice, err := s.choice(ctx, userID, id)
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			return nil, err
		}
		if choice != nil {
			in.Choice = choice
			ApplyChoice(in.Config, choice)
		}
		return in, nil
	}
	return nil, models.ErrNotFound
}

func (s *Store) choice(ctx context.Context, userID, groupConfigID string) (*models.LLMModelConfig, error) {
	var c models.LLMModelConfig
	err := s.repo.DB.WithContext(ctx).Where("owner_type = ? AND owner_id = ? AND inherits_from = ?",
		models.OwnerUser, userID, groupConfigID).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// ApplyChoice shows a group configuration as the user who made choice sees it: with their mode,
// and as their default when they made it theirs. A group's default stays a default: a user picks
// another configuration rather than unsetting their group's.
func ApplyChoice(g, choice *models.LLMModelConfig) {
	g.IsDefault = g.IsDefault || choice.IsDefault
	g.CopilotMode = choice.CopilotMode
}

// Choices returns the user's choices of inherited configurations, by group configuration id.
func Choices(rows []models.LLMModelConfig) map[string]*models.LLMModelConfig {
	out := map[string]*models.LLMModelConfig{}
	for i := range rows {
		if rows[i].InheritsFrom != "" {
			out[rows[i].InheritsFrom] = &rows[i]
		}
	}
	return out
}

// ChooseInherited records the user's choice about an inherited configuration: isDefault makes
// it (or stops it being) the configuration their chats use, mode is the copilot mode they use it
// with. nil leaves a setting as it is.
func (s *Store) ChooseInherited(ctx context.Context, userID string, in *Inherited, isDefault *bool, mode *string) error {
	if mode != nil {
		m := strings.ToLower(strings.TrimSpace(*mode))
		if m == "" {
			m = domain.ModeTeachingAssistant
		}
		if !contains(CopilotModes(), m) {
			return &ValidationError{Problems: []string{fmt.Sprintf("copilot_mode %q is not one of %s", m, strings.Join(CopilotModes(), ", "))}}
		}
		mode = &m
	}
	if isDefault != nil && *isDefault && !chatCapable(in.Config.ModelType) {
		return &ValidationError{Problems: []string{fmt.Sprintf(
			"a %s configuration cannot be the default: the default is what chat turns run with", in.Config.ModelType)}}
	}
	apply := func(c *models.LLMModelConfig) {
		if isDefault != nil {
			c.IsDefault = *isDefault
		}
		if mode != nil {
			c.CopilotMode = *mode
		}
	}
	if in.Choice != nil {
		_, err := s.repo.Update(ctx, models.OwnerUser, userID, in.Choice.ID, nil, func(c *models.LLMModelConfig) error {
			apply(c)
			return nil
		})
		return err
	}
	g := in.Config
	c := &models.LLMModelConfig{ID: uuid.NewString(), OwnerType: models.OwnerUser, OwnerID: userID, InheritsFrom: g.ID,
		// The model settings are the group's, read from its row whenever used; these copies only
		// fill the row's required columns.
		Name: g.Name, ModelType: g.ModelType, Provider: g.Provider, BaseURL: g.BaseURL, Model: g.Model,
		Temperature: g.Temperature, ContextLimit: g.ContextLimit, ContextStrategy: g.ContextStrategy,
		CopilotMode: g.CopilotMode, Extra: "{}"}
	apply(c)
	err := s.repo.Create(ctx, c, false)
	if errors.Is(err, gorm.ErrDuplicatedKey) || (err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")) {
		// A concurrent request made the choice first: apply ours on top of it.
		if existing, lookErr := s.choice(ctx, userID, g.ID); lookErr == nil {
			in.Choice = existing
			return s.ChooseInherited(ctx, userID, in, isDefault, mode)
		}
	}
	return err
}

// ForgetInherited removes the user's choice about an inherited configuration (models.ErrNotFound
// when they made none); the group's own default then applies to them again.
func (s *Store) ForgetInherited(ctx context.Context, userID string, in *Inherited) error {
	if in.Choice == nil {
		return models.ErrNotFound
	}
	return s.repo.Delete(ctx, models.OwnerUser, userID, in.Choice.ID, nil)
}
