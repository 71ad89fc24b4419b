package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/gns3"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/contextwindow"
	"github.com/gns3-copilot/gns3-copilot/internal/llm/llmconfig"
	"github.com/gns3-copilot/gns3-copilot/internal/respond"
	"github.com/gns3-copilot/gns3-copilot/models"
)

// maxLLMConfigBody bounds a configuration request; the longest field allowed is a few KB.
const maxLLMConfigBody = 64 << 10

const ctxLLMOwner = "gns3copilot.llmowner"

type llmConfigAPI struct {
	s     *Server
	store *llmconfig.Store
}

// llmConfigJSON is the reference's LLMModelConfigResponse. The key itself is never sent back:
// config.api_key is always null; api_key_set and api_key_hint ("sk-…abcd") say which key is set.
type llmConfigJSON struct {
	ConfigID   string          `json:"config_id"`
	Name       string          `json:"name"`
	ModelType  string          `json:"model_type"`
	Config     llmConfigFields `json:"config"`
	APIKeySet  bool            `json:"api_key_set"`
	APIKeyHint *string         `json:"api_key_hint"`
	UserID     *string         `json:"user_id"`
	GroupID    *string         `json:"group_id"`
	IsDefault  bool            `json:"is_default"`
	Version    int             `json:"version"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

type llmConfigFields struct {
	Provider        string  `json:"provider"`
	BaseURL         string  `json:"base_url"`
	Model           string  `json:"model"`
	Temperature     float64 `json:"temperature"`
	APIKey          *string `json:"api_key"`
	MaxTokens       *int    `json:"max_tokens"`
	ContextLimit    int     `json:"context_limit"`
	ContextStrategy string  `json:"context_strategy"`
	CopilotMode     string  `json:"copilot_mode"`
	// ReasoningEffort is how much a thinking model thinks: off, low, medium, high or max; null
	// for the provider's default.
	ReasoningEffort *string `json:"reasoning_effort"`
	// Extra are the configuration's custom fields, shown among the others as the reference does.
	Extra map[string]json.RawMessage `json:"-"`
}

// MarshalJSON adds the custom fields to the object; a custom field never hides a real one.
func (f llmConfigFields) MarshalJSON() ([]byte, error) {
	type plain llmConfigFields
	b, err := json.Marshal(plain(f))
	if err != nil || len(f.Extra) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range f.Extra {
		if _, taken := m[k]; !taken {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// llmConfigWithSource is the reference's LLMModelConfigWithSource: where an inherited
// configuration comes from.
type llmConfigWithSource struct {
	llmConfigJSON
	Source    string  `json:"source"`
	GroupName *string `json:"group_name"`
}

func configJSON(c *models.LLMModelConfig) llmConfigJSON {
	out := llmConfigJSON{
		ConfigID: c.ID, Name: c.Name, ModelType: c.ModelType,
		Config: llmConfigFields{Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model, Temperature: c.Temperature,
			ContextLimit: c.ContextLimit, ContextStrategy: c.ContextStrategy, CopilotMode: c.CopilotMode},
		APIKeySet: c.APIKeySealed != "", IsDefault: c.IsDefault, Version: c.Version,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
	if c.Extra != "" && c.Extra != "{}" {
		_ = json.Unmarshal([]byte(c.Extra), &out.Config.Extra)
	}
	if c.MaxTokens > 0 {
		n := c.MaxTokens
		out.Config.MaxTokens = &n
	}
	if c.ReasoningEffort != "" {
		e := c.ReasoningEffort
		out.Config.ReasoningEffort = &e
	}
	if c.APIKeyHint != "" {
		h := c.APIKeyHint
		out.APIKeyHint = &h
	}
	id := c.OwnerID
	if c.OwnerType == models.OwnerGroup {
		out.GroupID = &id
	} else {
		out.UserID = &id
	}
	return out
}

func (h *llmConfigAPI) owner(c *gin.Context) llmconfig.Owner {
	return c.MustGet(ctxLLMOwner).(llmconfig.Owner)
}

// userOwner lets a user manage their own configurations and a GNS3 superadmin anyone's.
func (h *llmConfigAPI) userOwner(c *gin.Context) {
	id := c.Param("user_id")
	if _, err := uuid.Parse(id); err != nil {
		abort(c, http.StatusUnprocessableEntity, "user_id must be a UUID, got '"+respond.Truncate(id, 80)+"'.")
		return
	}
	u := currentUser(c)
	if !u.Superadmin && !strings.EqualFold(id, u.ID) {
		abort(c, http.StatusForbidden, "You can only see and manage your own LLM model configurations (a GNS3 superadmin can manage anyone's).")
		return
	}
	c.Set(ctxLLMOwner, llmconfig.UserOwner(strings.ToLower(id)))
	c.Next()
}

// groupOwner lets a GNS3 superadmin manage a group's configurations and the group's members
// read them.
func (h *llmConfigAPI) groupOwner(write bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.Param("group_id")
		if _, err := uuid.Parse(id); err != nil {
			abort(c, http.StatusUnprocessableEntity, "group_id must be a UUID, got '"+respond.Truncate(id, 80)+"'.")
			return
		}
		id = strings.ToLower(id)
		u := currentUser(c)
		if !u.Superadmin {
			if write {
				abort(c, http.StatusForbidden, "Only a GNS3 superadmin can manage a group's LLM model configurations.")
				return
			}
			groups, _, err := h.store.GroupsOf(c.Request.Context(), u.GNS3, u.ID)
			if err != nil {
				abortGNS3(c, err, "Reading your GNS3 groups")
				return
			}
			member := false
			for _, g := range groups {
				member = member || strings.EqualFold(g.UserGroupID, id)
			}
			if !member {
				abort(c, http.StatusForbidden, "Only a GNS3 superadmin or a member of the group can see its LLM model configurations.")
				return
			}
		}
		c.Set(ctxLLMOwner, llmconfig.GroupOwner(id))
		c.Next()
	}
}

func (h *llmConfigAPI) configID(c *gin.Context) (string, bool) {
	id := c.Param("config_id")
	if _, err := uuid.Parse(id); err != nil {
		abort(c, http.StatusUnprocessableEntity, "config_id must be a UUID, got '"+respond.Truncate(id, 80)+"'.")
		return "", false
	}
	return strings.ToLower(id), true
}

// fail answers a store error with the status it means.
func (h *llmConfigAPI) fail(c *gin.Context, err error, id, what string) {
	var invalid *llmconfig.ValidationError
	var conflict *models.VersionConflictError
	switch {
	case errors.As(err, &invalid):
		abort(c, http.StatusUnprocessableEntity, "Invalid LLM model configuration: "+invalid.Error()+".")
	case errors.As(err, &conflict):
		abort(c, http.StatusConflict, fmt.Sprintf("LLM model configuration '%s' was changed since you read it (it is at version %d, you sent expected_version %d); reload it and make your change again.",
			id, conflict.Current, conflict.Expected))
	case errors.Is(err, models.ErrNotFound):
		abort(c, http.StatusNotFound, "LLM model configuration '"+id+"' not found.")
	default:
		h.s.internalError(c, err, what)
	}
}

func (h *llmConfigAPI) providers(c *gin.Context) {
	type strategy struct {
		Name  string  `json:"name"`
		Ratio float64 `json:"ratio"`
	}
	var strategies []strategy
	for _, s := range contextwindow.Strategies() {
		strategies = append(strategies, strategy{s, contextwindow.Ratio(s)})
	}
	c.JSON(http.StatusOK, gin.H{
		"providers":          llmconfig.Presets(),
		"context_strategies": strategies,
		"copilot_modes":      llmconfig.CopilotModes(),
		"model_types":        llmconfig.ModelTypes(),
		"reasoning_efforts":  llmconfig.Efforts(),
		"defaults": gin.H{
			"model_type": llmconfig.DefaultModelType, "temperature": llmconfig.DefaultTemperature,
			"context_limit": contextwindow.DefaultContextLimitK, "context_strategy": contextwindow.Balanced,
			"copilot_mode": domain.ModeTeachingAssistant,
		},
	})
}

// listInherited is the user's own configurations and their groups', with the one their turns
// run with, as the reference's LLMModelConfigInheritedResponse.
func (h *llmConfigAPI) listInherited(c *gin.Context) {
	ctx := c.Request.Context()
	owner := h.owner(c)
	groups, visible, err := h.store.GroupsOf(ctx, currentUser(c).GNS3, owner.ID)
	if err != nil {
		if errors.Is(err, gns3.ErrNotFound) {
			abort(c, http.StatusNotFound, "User '"+owner.ID+"' not found in GNS3.")
			return
		}
		abortGNS3(c, err, "Reading the user's GNS3 groups")
		return
	}
	own, err := h.store.List(ctx, owner)
	if err != nil {
		h.s.internalError(c, err, "Listing LLM model configurations failed")
		return
	}
	ids := make([]string, len(groups))
	names := map[string]string{}
	for i, g := range groups {
		ids[i] = strings.ToLower(g.UserGroupID)
		names[ids[i]] = g.Name
	}
	inherited, err := h.store.ListGroups(ctx, ids)
	if err != nil {
		h.s.internalError(c, err, "Listing group LLM model configurations failed")
		return
	}
	configs := make([]llmConfigWithSource, 0, len(own)+len(inherited))
	for i := range own {
		if own[i].InheritsFrom == "" {
			configs = append(configs, llmConfigWithSource{llmConfigJSON: configJSON(&own[i]), Source: "user"})
		}
	}
	choices := llmconfig.Choices(own)
	for _, gid := range ids { // in GNS3's group order, as the default is resolved
		for i := range inherited {
			if inherited[i].OwnerID == gid {
				name := names[gid]
				view := inherited[i]
				if ch := choices[view.ID]; ch != nil {
					llmconfig.ApplyChoice(&view, ch)
				}
				configs = append(configs, llmConfigWithSource{llmConfigJSON: configJSON(&view), Source: "group", GroupName: &name})
			}
		}
	}
	var def *llmConfigWithSource
	if chosen := llmconfig.Resolve(own, inherited, ids); chosen != nil {
		for i := range configs {
			if configs[i].ConfigID == chosen.ID {
				def = &configs[i]
				break
			}
		}
	}
	var server any
	if d, ok := h.store.ServerDefault(); ok {
		server = gin.H{"provider": d.Provider, "base_url": d.BaseURL, "model": d.Model}
	}
	c.JSON(http.StatusOK, gin.H{"configs": configs, "default_config": def, "total": len(configs),
		"server_default": server, "groups_visible": visible})
}

func (h *llmConfigAPI) list(c *gin.Context) ([]llmConfigJSON, *llmConfigJSON, bool) {
	rows, err := h.store.List(c.Request.Context(), h.owner(c))
	if err != nil {
		h.s.internalError(c, err, "Listing LLM model configurations failed")
		return nil, nil, false
	}
	out := make([]llmConfigJSON, 0, len(rows))
	defIdx := -1
	for i := range rows {
		if rows[i].InheritsFrom != "" {
			continue // a choice of a group configuration, listed with the group's
		}
		if rows[i].IsDefault {
			defIdx = len(out)
		}
		out = append(out, configJSON(&rows[i]))
	}
	var def *llmConfigJSON
	if defIdx >= 0 {
		def = &out[defIdx]
	}
	return out, def, true
}

func (h *llmConfigAPI) listOwn(c *gin.Context) {
	if out, _, ok := h.list(c); ok {
		c.JSON(http.StatusOK, out)
	}
}

func (h *llmConfigAPI) listGroup(c *gin.Context) {
	if out, def, ok := h.list(c); ok {
		c.JSON(http.StatusOK, gin.H{"configs": out, "default_config": def, "total": len(out)})
	}
}

func (h *llmConfigAPI) getDefault(c *gin.Context) {
	owner := h.owner(c)
	cfg, err := h.store.Default(c.Request.Context(), owner)
	if errors.Is(err, models.ErrNotFound) {
		abort(c, http.StatusNotFound, "There is no default LLM model configuration for this "+owner.Type+".")
		return
	}
	if err != nil {
		h.fail(c, err, "", "Reading the default LLM model configuration failed")
		return
	}
	if cfg.InheritsFrom != "" {
		// The user chose a group configuration as theirs: show that one, while it still applies.
		in, err := h.store.InheritedConfig(c.Request.Context(), currentUser(c).GNS3, owner.ID, cfg.InheritsFrom)
		if errors.Is(err, models.ErrNotFound) {
			abort(c, http.StatusNotFound, "There is no default LLM model configuration for this user: the group configuration they chose no longer applies to them.")
			return
		}
		if err != nil {
			h.fail(c, err, cfg.InheritsFrom, "Reading the default LLM model configuration failed")
			return
		}
		c.JSON(http.StatusOK, inheritedJSON(in))
		return
	}
	c.JSON(http.StatusOK, configJSON(cfg))
}

func (h *llmConfigAPI) get(c *gin.Context) {
	id, ok := h.configID(c)
	if !ok {
		return
	}
	if in, handled := h.inheritedTarget(c, id); handled {
		if in != nil {
			c.JSON(http.StatusOK, inheritedJSON(in))
		}
		return
	}
	cfg, err := h.store.Get(c.Request.Context(), h.owner(c), id)
	if err != nil {
		h.fail(c, err, id, "Reading the LLM model configuration failed")
		return
	}
	c.JSON(http.StatusOK, configJSON(cfg))
}

func (h *llmConfigAPI) create(c *gin.Context) {
	ch, _, ok := parseLLMConfigBody(c)
	if !ok {
		return
	}
	owner := h.owner(c)
	u := currentUser(c)
	ch.WriterIsSuperadmin = u.Superadmin
	if owner.Type == models.OwnerUser && !strings.EqualFold(owner.ID, u.ID) {
		// A superadmin acting for someone else: the user must exist in GNS3.
		if _, err := u.GNS3.UserGroups(c.Request.Context(), owner.ID); err != nil {
			if errors.Is(err, gns3.ErrNotFound) {
				abort(c, http.StatusNotFound, "User '"+owner.ID+"' not found in GNS3.")
				return
			}
			abortGNS3(c, err, "Looking the user up in GNS3")
			return
		}
	}
	cfg, err := h.store.Create(c.Request.Context(), owner, ch)
	if err != nil {
		h.fail(c, err, "", "Saving the LLM model configuration failed")
		return
	}
	c.JSON(http.StatusCreated, configJSON(cfg))
}

func (h *llmConfigAPI) update(c *gin.Context) {
	id, ok := h.configID(c)
	if !ok {
		return
	}
	ch, expected, ok := parseLLMConfigBody(c)
	if !ok {
		return
	}
	ch.WriterIsSuperadmin = currentUser(c).Superadmin
	if in, handled := h.inheritedTarget(c, id); handled {
		if in != nil {
			if problem := inheritedChangeProblem(ch, in.Config); problem != "" {
				abort(c, http.StatusForbidden, "LLM model configuration '"+id+"' belongs to your group '"+in.GroupName+
					"': you can make it your default or choose its copilot_mode, but "+problem+
					" only a GNS3 superadmin can change, under /v3/access/groups/"+in.Config.OwnerID+"/llm-model-configs.")
				return
			}
			h.chooseInherited(c, id, in, ch.IsDefault, ch.CopilotMode)
		}
		return
	}
	cfg, err := h.store.Update(c.Request.Context(), h.owner(c), id, expected, ch)
	if err != nil {
		h.fail(c, err, id, "Updating the LLM model configuration failed")
		return
	}
	c.JSON(http.StatusOK, configJSON(cfg))
}

func (h *llmConfigAPI) delete(c *gin.Context) {
	id, ok := h.configID(c)
	if !ok {
		return
	}
	var expected *int
	if v := c.Query("expected_version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			abort(c, http.StatusUnprocessableEntity, "expected_version must be a whole number, got '"+respond.Truncate(v, 40)+"'.")
			return
		}
		expected = &n
	}
	if in, handled := h.inheritedTarget(c, id); handled {
		if in == nil {
			return
		}
		err := h.store.ForgetInherited(c.Request.Context(), h.owner(c).ID, in)
		switch {
		case errors.Is(err, models.ErrNotFound):
			abort(c, http.StatusForbidden, "LLM model configuration '"+id+"' belongs to your group '"+in.GroupName+
				"'; only a GNS3 superadmin can delete it, under /v3/access/groups/"+in.Config.OwnerID+"/llm-model-configs.")
		case err != nil:
			h.fail(c, err, id, "Forgetting your choice of a group LLM model configuration failed")
		default:
			c.Status(http.StatusNoContent)
		}
		return
	}
	if err := h.store.Delete(c.Request.Context(), h.owner(c), id, expected); err != nil {
		h.fail(c, err, id, "Deleting the LLM model configuration failed")
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *llmConfigAPI) setDefault(c *gin.Context) {
	id, ok := h.configID(c)
	if !ok {
		return
	}
	if in, handled := h.inheritedTarget(c, id); handled {
		if in != nil {
			yes := true
			h.chooseInherited(c, id, in, &yes, nil)
		}
		return
	}
	cfg, err := h.store.SetDefault(c.Request.Context(), h.owner(c), id)
	if err != nil {
		h.fail(c, err, id, "Setting the default LLM model configuration failed")
		return
	}
	c.JSON(http.StatusOK, configJSON(cfg))
}

// inheritedTarget decides whether a user route's config_id names a configuration the user
// inherits from a group rather than one of their own. When it does (handled), it returns the
// configuration, or nil after answering the client itself (not found, GNS3 unreachable).
func (h *llmConfigAPI) inheritedTarget(c *gin.Context, id string) (in *llmconfig.Inherited, handled bool) {
	owner := h.owner(c)
	if owner.Type != models.OwnerUser {
		return nil, false
	}
	ctx := c.Request.Context()
	own, err := h.store.Get(ctx, owner, id)
	if err == nil && own.InheritsFrom == "" {
		return nil, false
	}
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return nil, false // the own-configuration path reports it
	}
	in, err = h.store.InheritedConfig(ctx, currentUser(c).GNS3, owner.ID, id)
	switch {
	case errors.Is(err, models.ErrNotFound):
		abort(c, http.StatusNotFound, "LLM model configuration '"+id+"' not found.")
		return nil, true
	case err != nil:
		var apiErr *gns3.APIError
		if errors.Is(err, gns3.ErrUnreachable) || errors.As(err, &apiErr) {
			abortGNS3(c, err, "Reading the user's GNS3 groups")
		} else {
			h.s.internalError(c, err, "Reading inherited LLM model configurations failed")
		}
		return nil, true
	}
	return in, true
}

func (h *llmConfigAPI) chooseInherited(c *gin.Context, id string, in *llmconfig.Inherited, isDefault *bool, mode *string) {
	ctx := c.Request.Context()
	userID := h.owner(c).ID
	if err := h.store.ChooseInherited(ctx, userID, in, isDefault, mode); err != nil {
		h.fail(c, err, id, "Saving your choice of a group LLM model configuration failed")
		return
	}
	now, err := h.store.InheritedConfig(ctx, currentUser(c).GNS3, userID, id)
	if err != nil {
		h.fail(c, err, id, "Reading the group LLM model configuration failed")
		return
	}
	c.JSON(http.StatusOK, inheritedJSON(now))
}

func inheritedJSON(in *llmconfig.Inherited) llmConfigWithSource {
	name := in.GroupName
	return llmConfigWithSource{llmConfigJSON: configJSON(in.Config), Source: "group", GroupName: &name}
}

// inheritedChangeProblem names the fields of ch that would change the group's configuration g
// (a client that sends the whole profile back with only the mode switched changes nothing else);
// "" when there are none.
func inheritedChangeProblem(ch llmconfig.Change, g *models.LLMModelConfig) string {
	var fields []string
	str := func(name string, v *string, have string, norm func(string) string) {
		if v != nil && norm(*v) != norm(have) {
			fields = append(fields, name)
		}
	}
	trim := strings.TrimSpace
	lower := func(x string) string { return strings.ToLower(strings.TrimSpace(x)) }
	url := func(x string) string { return strings.TrimRight(strings.TrimSpace(x), "/") }
	str("name", ch.Name, g.Name, trim)
	str("model_type", ch.ModelType, g.ModelType, lower)
	str("provider", ch.Provider, g.Provider, lower)
	str("base_url", ch.BaseURL, g.BaseURL, url)
	str("model", ch.Model, g.Model, trim)
	str("context_strategy", ch.ContextStrategy, g.ContextStrategy, lower)
	str("reasoning_effort", ch.ReasoningEffort, g.ReasoningEffort, llmconfig.NormalizeEffort)
	if ch.Temperature != nil && math.Abs(*ch.Temperature-g.Temperature) > 1e-9 {
		fields = append(fields, "temperature")
	}
	if ch.ContextLimit != nil && *ch.ContextLimit != g.ContextLimit {
		fields = append(fields, "context_limit")
	}
	if ch.MaxTokens != nil && *ch.MaxTokens != g.MaxTokens {
		fields = append(fields, "max_tokens")
	}
	if ch.APIKey != nil && trim(*ch.APIKey) != "" && trim(*ch.APIKey) != g.APIKeyHint {
		fields = append(fields, "api_key")
	}
	have := map[string]json.RawMessage{}
	_ = json.Unmarshal([]byte(g.Extra), &have)
	for k, v := range ch.Extra {
		if compactJSON(v) != compactJSON(have[k]) && !(string(v) == "null" && have[k] == nil) {
			fields = append(fields, k)
		}
	}
	if len(fields) == 0 {
		return ""
	}
	sort.Strings(fields)
	return strings.Join(fields, ", ") + " are the group's, which"
}

func compactJSON(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// parseLLMConfigBody reads a create or update request: the reference's flat fields (a nested
// "config" object, as responses have it, is read too), each type-checked so a wrong type is
// named in the answer. Other fields are custom fields, kept with the configuration as the
// reference keeps them; null leaves a field as it is, except
// max_tokens, where null (or "", as the reference accepts) removes the limit.
func parseLLMConfigBody(c *gin.Context) (llmconfig.Change, *int, bool) {
	var raw map[string]json.RawMessage
	if !decodeJSON(c, &raw, maxLLMConfigBody) {
		return llmconfig.Change{}, nil, false
	}
	if nested, ok := raw["config"]; ok {
		var inner map[string]json.RawMessage
		if json.Unmarshal(nested, &inner) == nil {
			for k, v := range inner {
				if _, top := raw[k]; !top {
					raw[k] = v
				}
			}
		}
	}
	f := fieldReader{raw: raw}
	ch := llmconfig.Change{
		Name: f.str("name"), ModelType: f.str("model_type"), Provider: f.str("provider"), BaseURL: f.str("base_url"),
		Model: f.str("model"), Temperature: f.number("temperature"), APIKey: f.str("api_key"),
		MaxTokens: f.maxTokens(), ContextLimit: f.integer("context_limit"), ContextStrategy: f.str("context_strategy"),
		CopilotMode: f.str("copilot_mode"), ReasoningEffort: f.str("reasoning_effort"), IsDefault: f.boolean("is_default"),
	}
	expected := f.integer("expected_version")
	for k, v := range raw {
		if _, known := llmConfigKnownFields[k]; known {
			continue
		}
		if ch.Extra == nil {
			ch.Extra = map[string]json.RawMessage{}
		}
		ch.Extra[k] = v
	}
	if len(f.problems) > 0 {
		abort(c, http.StatusUnprocessableEntity, "Invalid LLM model configuration: "+strings.Join(f.problems, "; ")+".")
		return ch, nil, false
	}
	return ch, expected, true
}

// llmConfigKnownFields are the fields of a request (and of a response a client may send back)
// that are not custom fields.
var llmConfigKnownFields = map[string]struct{}{
	"name": {}, "model_type": {}, "provider": {}, "base_url": {}, "model": {}, "temperature": {}, "api_key": {},
	"max_tokens": {}, "context_limit": {}, "context_strategy": {}, "copilot_mode": {}, "reasoning_effort": {}, "is_default": {},
	"expected_version": {}, "config": {},
	"config_id": {}, "user_id": {}, "group_id": {}, "version": {}, "created_at": {}, "updated_at": {},
	"api_key_set": {}, "api_key_hint": {}, "source": {}, "group_name": {},
}

type fieldReader struct {
	raw      map[string]json.RawMessage
	problems []string
}

func (f *fieldReader) value(name string) (json.RawMessage, bool) {
	v, ok := f.raw[name]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

func (f *fieldReader) wrong(name, want string) {
	f.problems = append(f.problems, fmt.Sprintf("%s must be %s", name, want))
}

func (f *fieldReader) str(name string) *string {
	v, ok := f.value(name)
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		f.wrong(name, "a string")
		return nil
	}
	return &s
}

func (f *fieldReader) number(name string) *float64 {
	v, ok := f.value(name)
	if !ok {
		return nil
	}
	var n float64
	if json.Unmarshal(v, &n) != nil {
		f.wrong(name, "a number")
		return nil
	}
	return &n
}

func (f *fieldReader) integer(name string) *int {
	n := f.number(name)
	if n == nil {
		return nil
	}
	if *n != math.Trunc(*n) || math.Abs(*n) > 1e9 {
		f.wrong(name, "a whole number")
		return nil
	}
	i := int(*n)
	return &i
}

func (f *fieldReader) boolean(name string) *bool {
	v, ok := f.value(name)
	if !ok {
		return nil
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		f.wrong(name, "true or false")
		return nil
	}
	return &b
}

// maxTokens reads max_tokens: a positive whole number, or null, "" or "null" for no limit.
func (f *fieldReader) maxTokens() *int {
	v, present := f.raw["max_tokens"]
	if !present {
		return nil
	}
	none := 0
	var s string
	if string(v) == "null" || (json.Unmarshal(v, &s) == nil && (s == "" || s == "null")) {
		return &none
	}
	n := f.integer("max_tokens")
	if n != nil && *n < 1 {
		f.wrong("max_tokens", "at least 1 (or null for the provider's own limit)")
		return nil
	}
	return n
}
