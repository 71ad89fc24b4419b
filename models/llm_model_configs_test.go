package models

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

func forEachLLMDB(t *testing.T, run func(t *testing.T, repo *LLMConfigRepository)) {
	for name, open := range testDatabases {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			if err := MigrateLLMConfigs(db); err != nil {
				t.Fatal(err)
			}
			if err := MigrateLLMConfigs(db); err != nil {
				t.Fatalf("migration is not idempotent: %v", err)
			}
			run(t, NewLLMConfigRepository(db))
		})
	}
}

func newLLMRow(ownerType, ownerID, name string) *LLMModelConfig {
	return &LLMModelConfig{ID: uuid.NewString(), OwnerType: ownerType, OwnerID: ownerID, Name: name, ModelType: "text",
		Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", Temperature: 0.7,
		ContextLimit: 128, ContextStrategy: "balanced", CopilotMode: "teaching_assistant"}
}

func defaults(t *testing.T, repo *LLMConfigRepository, ownerType, ownerID string) []string {
	t.Helper()
	rows, err := repo.List(context.Background(), ownerType, ownerID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		if r.IsDefault {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func TestLLMConfigRepositoryOneDefaultPerOwner(t *testing.T) {
	forEachLLMDB(t, func(t *testing.T, repo *LLMConfigRepository) {
		ctx := context.Background()
		user, other := uuid.NewString(), uuid.NewString()
		first := newLLMRow(OwnerUser, user, "first")
		if err := repo.Create(ctx, first, true); err != nil {
			t.Fatal(err)
		}
		if !first.IsDefault || first.Version != 0 {
			t.Fatalf("the owner's first configuration becomes the default: %+v", first)
		}
		second := newLLMRow(OwnerUser, user, "second")
		if err := repo.Create(ctx, second, true); err != nil {
			t.Fatal(err)
		}
		if second.IsDefault {
			t.Fatal("only the first becomes the default by itself")
		}
		third := newLLMRow(OwnerUser, user, "third")
		third.IsDefault = true
		if err := repo.Create(ctx, third, true); err != nil {
			t.Fatal(err)
		}
		if got := defaults(t, repo, OwnerUser, user); len(got) != 1 || got[0] != third.ID {
			t.Fatalf("defaults %v, want only %s", got, third.ID)
		}
		f, _ := repo.Get(ctx, OwnerUser, user, first.ID)
		if f.Version != 1 {
			t.Fatalf("losing the default flag is a change: version %d", f.Version)
		}
		// Another owner's default is untouched.
		o := newLLMRow(OwnerUser, other, "theirs")
		if err := repo.Create(ctx, o, true); err != nil {
			t.Fatal(err)
		}
		g := newLLMRow(OwnerGroup, user, "group with the same id string")
		if err := repo.Create(ctx, g, true); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.SetDefault(ctx, OwnerUser, user, second.ID); err != nil {
			t.Fatal(err)
		}
		if got := defaults(t, repo, OwnerUser, user); len(got) != 1 || got[0] != second.ID {
			t.Fatalf("after SetDefault defaults are %v", got)
		}
		if len(defaults(t, repo, OwnerUser, other)) != 1 || len(defaults(t, repo, OwnerGroup, user)) != 1 {
			t.Fatal("other owners keep their defaults")
		}
		// The database itself refuses a second default.
		bad := newLLMRow(OwnerUser, user, "sneaky")
		bad.IsDefault = true
		if err := repo.DB.Create(bad).Error; err == nil {
			t.Fatal("the partial unique index lets a second default in")
		}
		robot := newLLMRow("robot", user, "neither user nor group")
		if err := repo.DB.Create(robot).Error; err == nil {
			t.Fatal("the owner_type check lets an unknown owner type in")
		}
	})
}

func TestLLMConfigRepositoryConcurrentSetDefault(t *testing.T) {
	forEachLLMDB(t, func(t *testing.T, repo *LLMConfigRepository) {
		ctx := context.Background()
		user := uuid.NewString()
		var ids []string
		for i := 0; i < 6; i++ {
			c := newLLMRow(OwnerUser, user, "c")
			if err := repo.Create(ctx, c, false); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4*len(ids))
		for round := 0; round < 4; round++ {
			for _, id := range ids {
				wg.Add(1)
				go func(id string) {
					defer wg.Done()
					if _, err := repo.SetDefault(ctx, OwnerUser, user, id); err != nil {
						errs <- err
					}
				}(id)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			var vc *VersionConflictError
			if !errors.As(err, &vc) { // a lost race on the same row is a conflict, never a broken invariant
				t.Fatalf("concurrent SetDefault: %v", err)
			}
		}
		if got := defaults(t, repo, OwnerUser, user); len(got) != 1 {
			t.Fatalf("%d defaults after concurrent SetDefault", len(got))
		}
	})
}

func TestLLMConfigRepositoryOptimisticLocking(t *testing.T) {
	forEachLLMDB(t, func(t *testing.T, repo *LLMConfigRepository) {
		ctx := context.Background()
		user := uuid.NewString()
		c := newLLMRow(OwnerUser, user, "mine")
		if err := repo.Create(ctx, c, false); err != nil {
			t.Fatal(err)
		}
		v0 := 0
		got, err := repo.Update(ctx, OwnerUser, user, c.ID, &v0, func(r *LLMModelConfig) error { r.Name = "renamed"; return nil })
		if err != nil || got.Version != 1 || got.Name != "renamed" {
			t.Fatalf("update: %+v %v", got, err)
		}
		_, err = repo.Update(ctx, OwnerUser, user, c.ID, &v0, func(r *LLMModelConfig) error { r.Name = "stale"; return nil })
		var vc *VersionConflictError
		if !errors.As(err, &vc) || vc.Current != 1 || vc.Expected != 0 {
			t.Fatalf("stale update: %v", err)
		}
		stored, _ := repo.Get(ctx, OwnerUser, user, c.ID)
		if stored.Name != "renamed" || !stored.CreatedAt.Equal(c.CreatedAt) {
			t.Fatalf("a stale update changed the row or its creation time: %+v", stored)
		}
		refuse := errors.New("no")
		if _, err := repo.Update(ctx, OwnerUser, user, c.ID, nil, func(*LLMModelConfig) error { return refuse }); !errors.Is(err, refuse) {
			t.Fatalf("change's error: %v", err)
		}
		if _, err := repo.Update(ctx, OwnerUser, uuid.NewString(), c.ID, nil, func(*LLMModelConfig) error { return nil }); !errors.Is(err, ErrNotFound) {
			t.Fatalf("someone else's update: %v", err)
		}
		if err := repo.Delete(ctx, OwnerUser, user, c.ID, &v0); !errors.As(err, &vc) {
			t.Fatalf("stale delete: %v", err)
		}
		if err := repo.Delete(ctx, OwnerGroup, user, c.ID, nil); !errors.Is(err, ErrNotFound) {
			t.Fatalf("delete under the wrong owner: %v", err)
		}
		v1 := 1
		if err := repo.Delete(ctx, OwnerUser, user, c.ID, &v1); err != nil {
			t.Fatal(err)
		}
		if _, err := repo.ByID(ctx, c.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted row still there: %v", err)
		}
	})
}

func TestLLMConfigRepositoryConcurrentUpdatesLoseNothing(t *testing.T) {
	forEachLLMDB(t, func(t *testing.T, repo *LLMConfigRepository) {
		ctx := context.Background()
		user := uuid.NewString()
		c := newLLMRow(OwnerUser, user, "counter")
		c.MaxTokens = 0
		if err := repo.Create(ctx, c, false); err != nil {
			t.Fatal(err)
		}
		// Every writer reads, then updates with the version it read, retrying on conflict: the
		// final count proves no update overwrote another.
		const writers, each = 4, 5
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done := 0; done < each; {
					cur, err := repo.Get(ctx, OwnerUser, user, c.ID)
					if err != nil {
						t.Error(err)
						return
					}
					v := cur.Version
					_, err = repo.Update(ctx, OwnerUser, user, c.ID, &v, func(r *LLMModelConfig) error { r.MaxTokens++; return nil })
					var vc *VersionConflictError
					switch {
					case err == nil:
						done++
					case errors.As(err, &vc):
					default:
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		final, _ := repo.Get(ctx, OwnerUser, user, c.ID)
		if final.MaxTokens != writers*each || final.Version != writers*each {
			t.Fatalf("max_tokens %d version %d, want %d", final.MaxTokens, final.Version, writers*each)
		}
	})
}

func TestLLMConfigRepositoryListsAndDefaults(t *testing.T) {
	forEachLLMDB(t, func(t *testing.T, repo *LLMConfigRepository) {
		ctx := context.Background()
		user, g1, g2 := uuid.NewString(), uuid.NewString(), uuid.NewString()
		if _, err := repo.Default(ctx, OwnerUser, user); !errors.Is(err, ErrNotFound) {
			t.Fatalf("no default yet: %v", err)
		}
		for _, owner := range []struct{ typ, id string }{{OwnerUser, user}, {OwnerGroup, g1}, {OwnerGroup, g2}, {OwnerGroup, g2}} {
			if err := repo.Create(ctx, newLLMRow(owner.typ, owner.id, "x"), true); err != nil {
				t.Fatal(err)
			}
		}
		own, _ := repo.List(ctx, OwnerUser, user)
		groups, _ := repo.ListGroups(ctx, []string{g1, g2})
		none, _ := repo.ListGroups(ctx, nil)
		if len(own) != 1 || len(groups) != 3 || len(none) != 0 {
			t.Fatalf("own %d groups %d none %d", len(own), len(groups), len(none))
		}
		d, err := repo.Default(ctx, OwnerGroup, g2)
		if err != nil || d.OwnerID != g2 {
			t.Fatalf("group default: %+v %v", d, err)
		}
	})
}

// List is written by hand; it must read every column GORM's model has, into the field GORM
// would put it in, in GORM's order, so a column added to the model without adding it to the
// statement fails here.
func TestLLMConfigListReadsWhatGORMReads(t *testing.T) {
	forEachLLMDB(t, func(t *testing.T, repo *LLMConfigRepository) {
		ctx := context.Background()
		user := uuid.NewString()
		stmt := &gorm.Statement{DB: repo.DB}
		if err := stmt.Parse(&LLMModelConfig{}); err != nil {
			t.Fatal(err)
		}
		if got, want := llmConfigColumns, strings.Join(stmt.Schema.DBNames, ", "); got != want {
			t.Fatalf("the statement's columns\n%s\nare not the model's\n%s", got, want)
		}
		for i, name := range []string{"first", "second", "third"} {
			c := newLLMRow(OwnerUser, user, name)
			// Every field differs from the other rows and from its zero value, so a field read
			// into the wrong place or not at all shows.
			c.Temperature, c.MaxTokens, c.ContextLimit, c.Version = 0.25*float64(i+1), 100*(i+1), 8*(i+1), 0
			c.APIKeySealed, c.APIKeyHint, c.Extra = "sealed-"+name, "…"+name, `{"k":"`+name+`"}`
			c.EndpointTrusted, c.InheritsFrom, c.CopilotMode = i%2 == 0, "", "lab_automation_assistant"
			if err := repo.Create(ctx, c, i == 1); err != nil {
				t.Fatal(err)
			}
			if _, err := repo.Update(ctx, OwnerUser, user, c.ID, nil, func(c *LLMModelConfig) error {
				c.Name += " renamed"
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := repo.Create(ctx, newLLMRow(OwnerUser, uuid.NewString(), "someone else's"), true); err != nil {
			t.Fatal(err)
		}
		var want []LLMModelConfig
		if err := repo.DB.Where("owner_type = ? AND owner_id = ?", OwnerUser, user).Order("created_at").Order("id").Find(&want).Error; err != nil {
			t.Fatal(err)
		}
		got, err := repo.List(ctx, OwnerUser, user)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || len(want) != 3 {
			t.Fatalf("listed %d, GORM finds %d, want 3", len(got), len(want))
		}
		for i := range want {
			w, g := want[i], got[i]
			if !w.CreatedAt.Equal(g.CreatedAt) || !w.UpdatedAt.Equal(g.UpdatedAt) {
				t.Fatalf("row %d times: got %v %v, GORM reads %v %v", i, g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt)
			}
			w.CreatedAt, w.UpdatedAt, g.CreatedAt, g.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			if w != g {
				t.Fatalf("row %d:\n got %+v\nGORM %+v", i, g, w)
			}
		}
		if none, err := repo.List(ctx, OwnerGroup, user); err != nil || len(none) != 0 {
			t.Fatalf("another owner type lists nothing: %v %v", none, err)
		}
	})
}
