package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gns3-copilot/gns3-copilot/models"
)

const pruneUsage = `Usage: gns3-copilot prune --before DATE [--apply] [--include-audit] [serve's flags]

Removes the transcripts of chat sessions last active before DATE: the sessions, their turns,
messages and topology marks. The audit (approvals, configuration jobs, the commands sent to
devices) and exercise records stay unless --include-audit. Without --apply it only says what it
would remove.

If some of those sessions have approvals, configuration jobs or exercise records, prune refuses
unless --include-audit is given: those sessions then go with their records. Sessions with a
running turn or an open exercise are always left.

DATE is a day (2026-01-31, midnight UTC) or an RFC 3339 time (2026-01-31T08:00:00+01:00), not in
the future. The database is serve's: --database-url, else copilot.db in --data-dir, with the same
environment variables.

`

// runPrune is the prune command: it parses args, prints to stdout what it would remove or
// removed, and returns the exit status (2 for bad usage, 1 for a refusal or a failure).
func runPrune(ctx context.Context, args []string, stdout, stderr io.Writer, now time.Time) int {
	fs, cfg, finish := newFlagSet("prune")
	fs.SetOutput(stderr)
	var before string
	var apply, includeAudit bool
	fs.StringVar(&before, "before", "", "prune sessions last active before this day (2026-01-31) or time (RFC 3339)")
	fs.BoolVar(&apply, "apply", false, "remove them; without it prune only says what it would remove")
	fs.BoolVar(&includeAudit, "include-audit", false, "also prune sessions that have approvals, configuration jobs or exercise records, and those records with them")
	fs.Usage = func() {
		fmt.Fprint(stderr, pruneUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "gns3-copilot prune: "+format+"\n", a...)
		return code
	}
	if err := finish(); err != nil {
		return fail(2, "%v", err)
	}
	if fs.NArg() > 0 {
		return fail(2, "unexpected argument %q", fs.Arg(0))
	}
	cut, err := parsePruneDate(before, now)
	if err != nil {
		return fail(2, "%v", err)
	}
	if !models.IsPostgres(cfg.DatabaseURL) {
		path := models.SQLitePath(cfg.DatabaseURL, cfg.DataDir)
		if _, err := os.Stat(path); err != nil {
			return fail(1, "no database at %s (%v): is --data-dir (GNS3_COPILOT_DATA_DIR) or --database-url (GNS3_COPILOT_DATABASE_URL) the one serve uses?", path, err)
		}
	}
	db, err := models.Open(cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return fail(1, "%v", err)
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}
	p := models.Pruner{DB: db}
	if !apply {
		rep, err := p.Plan(ctx, cut)
		if err != nil {
			return fail(1, "%v", err)
		}
		printPrune(stdout, rep, "would be removed")
		if rep.WithAudit > 0 && !includeAudit {
			return fail(1, "refusing: %v", &models.AuditError{Sessions: rep.WithAudit})
		}
		if rep.Sessions > 0 {
			fmt.Fprintln(stdout, "Dry run: nothing was removed. Run again with --apply to remove it.")
		}
		return 0
	}
	rep, err := p.Prune(ctx, cut, includeAudit)
	var audit *models.AuditError
	if errors.As(err, &audit) {
		printPrune(stdout, rep, "would be removed")
		return fail(1, "refusing, nothing was removed: %v", err)
	}
	if err != nil {
		printPrune(stdout, rep, "removed before the failure")
		return fail(1, "%v", err)
	}
	printPrune(stdout, rep, "removed")
	return 0
}

// parsePruneDate reads --before: a day (midnight UTC) or an RFC 3339 time, not after now.
func parsePruneDate(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("--before DATE is required (a day like 2026-01-31, or an RFC 3339 time)")
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		if t, err = time.Parse(time.RFC3339, s); err != nil {
			return time.Time{}, fmt.Errorf("--before %q is not a day like 2026-01-31 or an RFC 3339 time like 2026-01-31T08:00:00Z", s)
		}
	}
	if t.After(now) {
		return time.Time{}, fmt.Errorf("--before %s is in the future; prune removes only sessions already idle before a past date", s)
	}
	return t.UTC(), nil
}

func printPrune(w io.Writer, r models.PruneReport, verb string) {
	fmt.Fprintf(w, "Sessions last active before %s: %s %s, with %s, %s and %s.\n",
		r.Before.Format(time.RFC3339), count(r.Sessions, "session"), verb, count(r.Turns, "turn"),
		count(r.Messages, "message"), count(r.TopologyMarks, "topology mark"))
	if r.WithAudit > 0 {
		have := "have"
		if r.WithAudit == 1 {
			have = "has"
		}
		fmt.Fprintf(w, "%d of them %s approvals, configuration jobs or exercise records.\n", r.WithAudit, have)
	}
	audit := "Kept, of those sessions"
	if r.AuditIncluded {
		audit = "With them (--include-audit)"
	}
	fmt.Fprintf(w, "%s: %s, %s, %s, %s.\n", audit, count(r.Approvals, "approval"),
		count(r.ConfigJobs, "configuration job"), count(r.DeviceCommands, "device command record"), count(r.Exercises, "exercise"))
	if r.Busy > 0 {
		fmt.Fprintf(w, "Left alone: %s with a running turn or an open exercise.\n", count(r.Busy, "session"))
	}
}

// count writes n things, in the plural unless n is 1.
func count(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
