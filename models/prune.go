package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// PruneReport says what a prune of old transcripts finds (a dry run) or removed.
type PruneReport struct {
	// Before is the cut: sessions last active (updated_at) before it are old.
	Before time.Time
	// What goes: the old sessions with their turns, messages and topology marks.
	Sessions, Turns, Messages, TopologyMarks int64
	// WithAudit counts the old sessions (among Sessions) that have approvals, configuration jobs
	// or exercise records: pruning them needs IncludeAudit.
	WithAudit int64
	// The old sessions' audit (approvals, configuration jobs, the commands sent to devices) and
	// exercise records: kept, unless the prune includes the audit (AuditIncluded), which removes
	// them with their sessions.
	Approvals, ConfigJobs, DeviceCommands, Exercises int64
	AuditIncluded                                    bool
	// Busy counts old sessions left alone because a turn runs in them or an exercise waits.
	Busy int64
}

// AuditError is a prune refused because old sessions have audit or exercise records and the
// prune was not told to include them.
type AuditError struct{ Sessions int64 }

func (e *AuditError) Error() string {
	return fmt.Sprintf("%d of the sessions to prune have approvals, configuration jobs or exercise records; "+
		"they are kept unless the prune includes the audit (--include-audit), which removes those records with their sessions", e.Sessions)
}

// Pruner removes the transcripts of sessions nobody has used since a date: the session rows,
// their turns, messages and topology marks. By default the audit outlives the conversation it
// came from: device command records stay, and a session with approvals, configuration jobs or
// exercise records is not touched at all. Only when told to include the audit does it remove
// those records too, with their sessions.
type Pruner struct {
	DB *gorm.DB
	// Batch is how many sessions one transaction removes (default 200), so that a prune beside a
	// running serve holds SQLite's write lock only briefly at a time.
	Batch int
}

// pruneTables are the tables whose rows name a session and go with it, besides chat_sessions.
var pruneTables = []struct {
	model any
	count func(*PruneReport) *int64
}{
	{&ChatMessage{}, func(r *PruneReport) *int64 { return &r.Messages }},
	{&ChatTurn{}, func(r *PruneReport) *int64 { return &r.Turns }},
	{&TopologyMark{}, func(r *PruneReport) *int64 { return &r.TopologyMarks }},
}

// keptTables are the tables whose rows name a session and stay unless the audit is included;
// audit marks those that make a session's prune need it.
var keptTables = []struct {
	model any
	audit bool
	count func(*PruneReport) *int64
}{
	{&Approval{}, true, func(r *PruneReport) *int64 { return &r.Approvals }},
	{&ConfigJob{}, true, func(r *PruneReport) *int64 { return &r.ConfigJobs }},
	{&Exercise{}, true, func(r *PruneReport) *int64 { return &r.Exercises }},
	{&InjectionPlan{}, true, nil},
	{&DeviceCommand{}, false, func(r *PruneReport) *int64 { return &r.DeviceCommands }},
}

// old selects the thread ids of sessions last active before the cut.
func (p Pruner) old(tx *gorm.DB, before time.Time) *gorm.DB {
	return tx.Model(&ChatSession{}).Select("thread_id").Where("updated_at < ?", before.UTC())
}

// idle narrows q (selecting thread ids) to sessions with no running turn and no open exercise.
func (p Pruner) idle(tx, q *gorm.DB) *gorm.DB {
	q = q.Where("thread_id NOT IN (?)", tx.Model(&ChatTurn{}).Select("session_id").Where("status = ?", domain.TurnRunning))
	if tx.Migrator().HasTable(&Exercise{}) {
		q = q.Where("thread_id NOT IN (?)", tx.Model(&Exercise{}).Select("session_id").Where("status = ?", domain.ExerciseOpen))
	}
	return q
}

// audited narrows q to sessions with audit or exercise records (with is true) or without.
func (p Pruner) audited(tx, q *gorm.DB, with bool) *gorm.DB {
	op := "NOT IN"
	if with {
		op = "IN"
	}
	var conds []string
	var args []any
	for _, k := range keptTables {
		if k.audit && tx.Migrator().HasTable(k.model) {
			conds = append(conds, "thread_id "+op+" (?)")
			args = append(args, tx.Model(k.model).Select("session_id"))
		}
	}
	if len(conds) == 0 {
		if with {
			return q.Where("1 = 0")
		}
		return q
	}
	join := " AND "
	if with {
		join = " OR "
	}
	where := conds[0]
	for _, c := range conds[1:] {
		where += join + c
	}
	return q.Where("("+where+")", args...)
}

// Plan counts what Prune would remove and keep, changing nothing.
func (p Pruner) Plan(ctx context.Context, before time.Time) (PruneReport, error) {
	rep := PruneReport{Before: before.UTC()}
	db := p.DB.WithContext(ctx)
	if !db.Migrator().HasTable(&ChatSession{}) {
		return rep, fmt.Errorf("the database has no chat_sessions table: it is not the copilot's, or serve has never started on it")
	}
	var all int64
	if err := p.old(db, before).Count(&all).Error; err != nil {
		return rep, err
	}
	if err := p.idle(db, p.old(db, before)).Count(&rep.Sessions).Error; err != nil {
		return rep, err
	}
	rep.Busy = all - rep.Sessions
	if rep.Sessions == 0 {
		return rep, nil
	}
	if err := p.audited(db, p.idle(db, p.old(db, before)), true).Count(&rep.WithAudit).Error; err != nil {
		return rep, err
	}
	ids := p.idle(db, p.old(db, before))
	for _, t := range pruneTables {
		if !db.Migrator().HasTable(t.model) {
			continue
		}
		if err := db.Model(t.model).Where("session_id IN (?)", ids).Count(t.count(&rep)).Error; err != nil {
			return rep, err
		}
	}
	for _, k := range keptTables {
		if k.count == nil || !db.Migrator().HasTable(k.model) {
			continue
		}
		if err := db.Model(k.model).Where("session_id IN (?)", ids).Count(k.count(&rep)).Error; err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// Prune removes the transcripts of the sessions last active before the cut that are idle (no
// running turn, no open exercise), a batch per transaction, each batch chosen afresh so a
// session used meanwhile is left. It refuses (*AuditError, nothing removed) when some of them
// have audit or exercise records, unless includeAudit. The report counts what it removed and,
// from its plan, what stays.
func (p Pruner) Prune(ctx context.Context, before time.Time, includeAudit bool) (PruneReport, error) {
	plan, err := p.Plan(ctx, before)
	if err != nil {
		return plan, err
	}
	if plan.WithAudit > 0 && !includeAudit {
		return plan, &AuditError{Sessions: plan.WithAudit}
	}
	batch := p.Batch
	if batch <= 0 {
		batch = 200
	}
	done := PruneReport{Before: plan.Before, WithAudit: plan.WithAudit, Busy: plan.Busy, AuditIncluded: includeAudit}
	if !includeAudit { // what stays, as planned
		done.Approvals, done.ConfigJobs, done.DeviceCommands, done.Exercises = plan.Approvals, plan.ConfigJobs, plan.DeviceCommands, plan.Exercises
	}
	for {
		var n int64
		err := p.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			q := p.idle(tx, p.old(tx, before))
			if !includeAudit {
				q = p.audited(tx, q, false)
			}
			var ids []string
			if err := q.Order("thread_id").Limit(batch).Pluck("thread_id", &ids).Error; err != nil || len(ids) == 0 {
				return err
			}
			for _, t := range pruneTables {
				if err := p.remove(tx, t.model, ids, t.count(&done)); err != nil {
					return err
				}
			}
			if includeAudit {
				for _, k := range keptTables {
					var removed int64
					if err := p.remove(tx, k.model, ids, &removed); err != nil {
						return err
					}
					if k.count != nil {
						*k.count(&done) += removed
					}
				}
			}
			res := tx.Where("thread_id IN ?", ids).Delete(&ChatSession{})
			n = res.RowsAffected
			done.Sessions += n
			return res.Error
		})
		if err != nil || n == 0 {
			return done, err
		}
	}
}

// remove deletes a table's rows of the given sessions, adding how many to n.
func (p Pruner) remove(tx *gorm.DB, model any, ids []string, n *int64) error {
	if !tx.Migrator().HasTable(model) {
		return nil
	}
	res := tx.Where("session_id IN ?", ids).Delete(model)
	*n += res.RowsAffected
	return res.Error
}
