package models

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
)

// diskTurns is how many turns BenchmarkDiskPerTurn writes.
const diskTurns = 1000

// sqliteBytes checkpoints the WAL into the database file and returns the file's size: what the
// database takes on disk once serve has checkpointed (the WAL is then truncated).
func sqliteBytes(b *testing.B, repo *ChatRepository, path string) int64 {
	b.Helper()
	if err := repo.DB.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// BenchmarkDiskPerTurn writes 1,000 chat turns through the repository, as the API and the
// worker write them, into a SQLite file, and reports how much the file grew per turn
// (disk-B/turn). A turn is a classroom one: a question, the model's tool call, the tool's result
// in the standard format (two devices' show output, ~1.3 KB), the answer (~700 B), the two device
// command records of the audit, the session's statistics and the user's token count. Sessions
// are ten turns long and titled after their first. Approvals, exercises and the event log
// (which expires) are not in it. after-prune-B/turn is what stays once prune has removed every
// transcript and VACUUM has returned the space: the device audit.
func BenchmarkDiskPerTurn(b *testing.B) {
	show := "PC1> show ip\nNAME        : PC1[1]\nIP/MASK     : 10.0.0.1/24\nGATEWAY     : 10.0.0.254\nDNS         : \nMAC         : 00:50:79:66:68:00\nLPORT       : 20000\nRHOST:PORT  : 127.0.0.1:20001\nMTU         : 1500\n"
	result := `{"success":true,"total":2,"successful":2,"failed":0,"data":[{"id":"n1","name":"PC1","status":"success","result":` +
		fmt.Sprintf("%q", show) + `},{"id":"n2","name":"PC2","status":"success","result":` + fmt.Sprintf("%q", strings.ReplaceAll(show, "PC1", "PC2")) +
		`}],"metadata":{"tool_name":"execute_multiple_device_commands","version":"1.0","execution_time":1.25}}`
	answer := strings.Repeat("PC1 has 10.0.0.1/24 with gateway 10.0.0.254; PC2 is on the same subnet. ", 10)
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "copilot.db")
		db := openMigrated(b, path)
		repo := NewChatRepository(db)
		devs := DeviceRepository{DB: db}
		ctx := context.Background()
		empty := sqliteBytes(b, repo, path)
		b.StartTimer()
		sid := ""
		for i := 0; i < diskTurns; i++ {
			if i%10 == 0 {
				sid = ""
			}
			sess, turn, created, err := repo.StartTurn(ctx, StartTurnParams{SessionID: sid, UserID: fmt.Sprintf("student-%02d", (i/10)%30),
				ProjectID: "lab-project-0000000000000000000000000001", Message: "Why can PC1 not ping PC2? I configured both addresses.",
				Mode: domain.ModeTeachingAssistant, InitialTitle: "New Conversation", WorkflowID: func(s, t string) string { return "chat-" + s + "-" + t }})
			if err != nil {
				b.Fatal(err)
			}
			sid = sess.ThreadID
			for idx, m := range []ChatMessage{
				{Role: "assistant", Content: "Let me check both PCs.", ToolCalls: `[{"id":"call_` + fmt.Sprint(i) + `","type":"function","function":{"name":"execute_multiple_device_commands","arguments":"{\"device_names\":[\"PC1\",\"PC2\"],\"commands\":[\"show ip\"]}"}}]`},
				{Role: "tool", Name: "execute_multiple_device_commands", ToolCallID: "call_" + fmt.Sprint(i), Content: result},
				{Role: "assistant", Content: answer},
			} {
				m.ID, m.SessionID, m.TurnID, m.TurnSeq, m.Idx = MessageID(turn.ID, idx+1), sid, turn.ID, turn.Seq, idx+1
				if err := repo.SaveMessage(ctx, &m); err != nil {
					b.Fatal(err)
				}
			}
			for n, node := range []string{"PC1", "PC2"} {
				if err := devs.Save(ctx, &DeviceCommand{TurnID: turn.ID, ToolCallID: "call_" + fmt.Sprint(i), NodeID: fmt.Sprintf("node-%d", n),
					SessionID: sid, UserID: turn.UserID, ProjectID: turn.ProjectID, DeviceName: node, Tool: "execute_multiple_device_commands",
					Command: "show ip", Status: CommandOK, Output: strings.ReplaceAll(show, "PC1", node)}); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := repo.FinalizeTurn(ctx, FinalizeParams{TurnID: turn.ID, Status: domain.TurnCompleted, LLMCalls: 2,
				InputTokens: 3000, OutputTokens: 200}); err != nil {
				b.Fatal(err)
			}
			if created {
				if _, err := repo.SetAutoTitle(ctx, sid, "PC1 cannot ping PC2"); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StopTimer()
		grown := sqliteBytes(b, repo, path) - empty
		b.ReportMetric(float64(grown)/diskTurns, "disk-B/turn")
		b.ReportMetric(float64(grown)/(1<<20), "MB/1000turns")
		// What a prune of every transcript leaves (the device audit), once VACUUM has given the
		// freed pages back.
		if _, err := (Pruner{DB: db}).Prune(ctx, repo.Now().Add(time.Hour), false); err != nil {
			b.Fatal(err)
		}
		if err := db.Exec("VACUUM").Error; err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sqliteBytes(b, repo, path)-empty)/diskTurns, "after-prune-B/turn")
		if s, err := db.DB(); err == nil {
			_ = s.Close()
		}
		b.StartTimer()
	}
}
