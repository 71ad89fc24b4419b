package models

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
)

func TestRedactPrivateHidesInjectionTurnsOnly(t *testing.T) {
	msgs := []ChatMessage{
		{TurnID: "t1", Role: "user", Content: "Inject a network fault"},
		{TurnID: "t1", Role: "assistant", ToolCalls: `[{"id":"c1","type":"function","function":{"name":"execute_vpcs_commands","arguments":"{\"device_configs\":[{\"device_name\":\"PC1\",\"commands\":[\"ip 10.0.0.99/24\"]}]}"}}]`,
			Reasoning: "PC1 gets the wrong address 10.0.0.99", ReasoningState: `{"source":{"provider":"deepseek"}}`},
		{TurnID: "t1", Role: "tool", ToolCallID: "c1", Name: "execute_vpcs_commands", Content: `{"success":true,"data":[{"result":"PC1 : 10.0.0.99"}]}`},
		{TurnID: "t1", Role: "assistant", Content: "I gave PC1 the address 10.0.0.99."},
		{TurnID: "t2", Role: "user", Content: "what did you change on 10.0.0.99?"},
		{TurnID: "t2", Role: "user", Content: "<lab_update>PC2 stopped</lab_update>", ModelContext: true},
		{TurnID: "t2", Role: "assistant", Content: "Nothing I can say."},
	}
	// An injection turn's notes about the lab and its brief would name the fault: they go.
	withContext := append([]ChatMessage{msgs[0], {TurnID: "t1", Role: "user", ModelContext: true,
		Content: "<lab_update>link PC1 e0 <-> PC2 e0 now: [conditions: loss 60%]</lab_update>"}}, msgs[1:]...)
	require.Equal(t, RedactPrivate(msgs, map[string]bool{"t1": true}, ""), RedactPrivate(withContext, map[string]bool{"t1": true}, ""))
	require.Equal(t, withContext, RedactPrivate(withContext, map[string]bool{"t1": true}, "t1"))

	out := RedactPrivate(msgs, map[string]bool{"t1": true}, "")
	var all strings.Builder
	for _, m := range out[:4] {
		all.WriteString(m.Content + m.ToolCalls + m.Reasoning + m.ReasoningState)
	}
	require.NotContains(t, all.String(), "10.0.0.99")
	require.NotContains(t, all.String(), "PC1")
	require.Contains(t, out[1].ToolCalls, `"name":"execute_vpcs_commands"`, "which tool ran stays")
	require.Contains(t, out[1].ToolCalls, `"arguments":"{}"`)
	require.Equal(t, HiddenToolResult, out[2].Content)
	require.Equal(t, InjectedText, out[3].Content)
	require.Equal(t, "Inject a network fault", out[0].Content, "the student's own message stays")
	require.Equal(t, msgs[4:], out[4:], "other turns are untouched")
	require.Contains(t, msgs[3].Content, "10.0.0.99", "the stored messages are not changed")

	own := RedactPrivate(msgs, map[string]bool{"t1": true}, "t1")
	require.Equal(t, msgs, own, "the injection turn's own model calls read it whole")
	require.Equal(t, msgs, RedactPrivate(msgs, nil, ""))
}

func TestSessionsWithExercisesNamesOnlyThoseWithOne(t *testing.T) {
	onEachDatabase(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		repo := ExerciseRepository{DB: db}
		for seq, turn := range []string{"t1", "t2"} {
			_, err := repo.RecordFault(ctx, &Exercise{ID: ExerciseID("s1", seq+1), SessionID: "s1", TurnID: turn, Seq: seq + 1,
				ProjectID: "p", UserID: "u", ExpiresAt: time.Now().Add(time.Hour)},
				&InjectedFault{ToolCallID: "c-" + turn, NodeID: "n", Device: "PC1", Lines: "[]", Description: "d",
					VerifyCommand: "show ip", VerifyExpect: "x", Hints: "[]"})
			require.NoError(t, err)
		}
		got, err := repo.SessionsWithExercises(ctx, []string{"s1", "s2"})
		require.NoError(t, err)
		require.Equal(t, map[string]bool{"s1": true}, got)
		none, err := repo.SessionsWithExercises(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)
	})
}
