package models

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// BenchmarkTurnRows is the copilot's own database work for one new chat, in the order the API, the
// model call and the finalizer do it (issue 36: serve's CPU a turn): the turn started under a
// per-user limit after the user's model configurations were read, the turn, the transcript and the
// topology mark read for the prompt, the answer stored, the title's check and reads, the turn
// finalized with its title, and the session's new topology mark. The credentials and the event log
// are stores of their own, not in it. It runs on a SQLite file already holding turnBenchBacklog
// finished turns of other students, as a class that has used the copilot for a while. One op is
// one turn.
func BenchmarkTurnRows(b *testing.B) {
	db, path, turn := turnRows(b)
	b.ReportAllocs()
	cpu0 := processCPU(b)
	i := 0
	for b.Loop() {
		i++
		turn(i)
	}
	// The process's CPU, not the wall clock: on a shared machine the wall clock also counts the
	// time other processes had the cores.
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")

	// What a turn writes into the WAL, counted in pages: every page a commit changed is written
	// whole, so this is what the commits cost in writes, and what a checkpoint copies back later.
	// Exact where the CPU above is noisy. The checkpoint is held off while it is counted.
	b.StopTimer()
	b.ReportMetric(walPages(b, db, path, func() {
		for range walTurns {
			i++
			turn(i)
		}
	})/walTurns, "wal-pages/turn")
}

// BenchmarkTurnRowsConcurrent is BenchmarkTurnRows's turns taken by a class at once: 100 turns
// run together in each round, as in the load benchmark's burst, so that their writes meet at
// SQLite's one writer. One op is one turn.
func BenchmarkTurnRowsConcurrent(b *testing.B) {
	const class = 100
	db, path, turn := turnRows(b)
	round := func(first int) {
		var wg sync.WaitGroup
		for k := range class {
			wg.Go(func() { turn(first + k) })
		}
		wg.Wait()
	}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		// b.Loop counts turns; every class-th one runs a round of class turns.
		if n%class == 0 {
			round(n)
		}
		n++
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.StopTimer()
	b.ReportMetric(walPages(b, db, path, func() {
		for r := range walTurns / class {
			round(n + r*class)
		}
	})/walTurns, "wal-pages/turn")
}

// turnRows opens the benchmarks' database and returns the sequence of one turn, of the i-th
// student of the class.
func turnRows(b *testing.B) (*gorm.DB, string, func(i int)) {
	path := filepath.Join(b.TempDir(), "copilot.db")
	db := openMigrated(b, path)
	b.Cleanup(func() {
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
	})
	repo := NewChatRepository(db)
	marks := TopologyMarks{DB: db}
	configs := NewLLMConfigRepository(db)
	ctx := context.Background()
	for i := range 30 {
		if err := configs.Create(ctx, newLLMRow(OwnerUser, fmt.Sprintf("student-%02d", i), "class model"), true); err != nil {
			b.Fatal(err)
		}
	}
	// fatal is b.Fatal for the turns BenchmarkTurnRowsConcurrent runs on goroutines of their own,
	// where FailNow may not be called: it fails the benchmark and ends the calling goroutine.
	fatal := func(args ...any) {
		b.Error(args...)
		runtime.Goexit()
	}
	start := func(user string) (*ChatSession, *ChatTurn) {
		if own, err := configs.List(ctx, OwnerUser, user); err != nil || len(own) != 1 {
			fatal(own, err)
		}
		sess, turn, _, err := repo.StartTurn(ctx, StartTurnParams{UserID: user, ProjectID: "lab-project-0000000000000000000000000001",
			Message: "What is in my lab?", Mode: domain.ModeTeachingAssistant, InitialTitle: "What is in my lab?",
			WorkflowID: func(s, t string) string { return "chat-" + s + "-" + t }, MaxRunningPerUser: 5})
		if err != nil {
			fatal(err)
		}
		return sess, turn
	}
	for i := range turnBenchBacklog {
		_, turn := start(fmt.Sprintf("student-%02d", i%30))
		if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted, LLMCalls: 1}); err != nil {
			fatal(err)
		}
	}
	private := func(string) bool { return false }
	answer := "Your lab has two VPCS nodes, PC1 and PC2, linked on e0. PC1 is started; PC2 is stopped."
	turn := func(i int) {
		sess, turn := start(fmt.Sprintf("student-%02d", i%30))
		// The model call.
		t, err := repo.Turn(ctx, turn.ID)
		if err != nil {
			fatal(err)
		}
		if _, _, err := repo.Transcript(ctx, t, private); err != nil {
			fatal(err)
		}
		if _, err := marks.Get(ctx, sess.ThreadID); err != nil && err != ErrNotFound {
			fatal(err)
		}
		if err := repo.SaveMessage(ctx, &ChatMessage{ID: MessageID(t.ID, 1), SessionID: t.SessionID, TurnID: t.ID, TurnSeq: t.Seq, Idx: 1,
			Role: "assistant", Content: answer, Metadata: `{"model":"gpt-4o-mini","input_tokens":2900,"output_tokens":30}`}); err != nil {
			fatal(err)
		}
		// The finalizer: what the title is made of, then the turn's end with its title.
		if wanted, err := repo.TitleWanted(ctx, sess.ThreadID); err != nil || !wanted {
			fatal(wanted, err)
		}
		t, err = repo.Turn(ctx, turn.ID)
		if err != nil {
			fatal(err)
		}
		if _, _, err := repo.Transcript(ctx, t, private); err != nil {
			fatal(err)
		}
		if fin, err := repo.FinishTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted, LLMCalls: 2,
			InputTokens: 3000, OutputTokens: 40, Title: "Two PCs in the lab"}); err != nil || !fin.Titled {
			fatal(fin, err)
		}
		if err := marks.Put(ctx, &TopologyMark{SessionID: sess.ThreadID, ProjectID: t.ProjectID, Summary: `{"nodes":2,"links":1}`}); err != nil {
			fatal(err)
		}
	}
	return db, path, turn
}

// walPages counts the WAL pages run writes, with the checkpoint held off.
func walPages(b *testing.B, db *gorm.DB, path string, run func()) float64 {
	var out []map[string]any
	if err := db.Raw("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&out).Error; err != nil {
		b.Fatal(err)
	}
	if err := db.Raw("PRAGMA wal_autocheckpoint=0").Scan(&out).Error; err != nil {
		b.Fatal(err)
	}
	var pageSize int64
	if err := db.Raw("PRAGMA page_size").Scan(&pageSize).Error; err != nil {
		b.Fatal(err)
	}
	run()
	st, err := os.Stat(path + "-wal")
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Raw("PRAGMA wal_autocheckpoint=1000").Scan(&out).Error; err != nil {
		b.Fatal(err)
	}
	// A WAL frame is a page behind a 24-byte header, after the file's 32-byte header.
	return float64(st.Size()-32) / float64(pageSize+24)
}

// walTurns is how many turns BenchmarkTurnRows counts the WAL pages of.
const walTurns = 200

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// turnBenchBacklog is how many finished turns BenchmarkTurnRows's database holds before it
// measures: a class of 30 after a few weeks.
const turnBenchBacklog = 5000

// openMigrated opens the SQLite file at path as serve does and migrates it.
func openMigrated(b *testing.B, path string) *gorm.DB {
	b.Helper()
	db, err := Open("sqlite:"+path, "")
	if err != nil {
		b.Fatal(err)
	}
	if err := Migrate(db); err != nil {
		b.Fatal(err)
	}
	return db
}
