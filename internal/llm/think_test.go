package llm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Reasoning inside <think> tags is split from the answer however the content is cut into
// chunks: every way of cutting each case in two and in three gives the same split, and nothing
// of the reasoning ever reaches the answer.
func TestThinkSplitterAtEveryChunkBoundary(t *testing.T) {
	cases := []struct {
		name             string
		content          string
		omitsOpen        bool
		reasoning, reply string
	}{
		{"tags", "<think>\nPC1 has no gateway.\n</think>\n\nSet the gateway on PC1.", false, "\nPC1 has no gateway.\n", "Set the gateway on PC1."},
		{"white space before the tag", "\n  <think>plan</think>answer", false, "plan", "answer"},
		{"no reasoning", "Set the gateway on PC1.", false, "", "Set the gateway on PC1."},
		{"a tag later in the answer is the answer's", "Use <think> tags for reasoning </think> ok", false, "", "Use <think> tags for reasoning </think> ok"},
		{"an unclosed think at the end", "<think>the link is down, so", false, "the link is down, so", ""},
		{"a cut closing tag at the end", "<think>hmm</thi", false, "hmm</thi", ""},
		{"only the opening tag's beginning", "<thi", false, "", "<thi"},
		{"empty reasoning", "<think>\n\n</think>\n\nHello!", false, "\n\n", "Hello!"},
		{"no opening tag", "The user says hello.\n</think>\n\nHello! How can I help?", true, "The user says hello.\n", "Hello! How can I help?"},
		{"no opening tag and no reasoning", "Hello! How can I help?", true, "", "Hello! How can I help?"},
		{"no opening tag, but the model opened one", "<think>x</think>y", true, "x", "y"},
		{"a less-than sign in the answer", "<b>bold</b> and a < b", false, "", "<b>bold</b> and a < b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.content
			var cuts [][]string
			cuts = append(cuts, []string{c})
			for i := 1; i < len(c); i++ {
				cuts = append(cuts, []string{c[:i], c[i:]})
				for j := i + 1; j < len(c); j++ {
					cuts = append(cuts, []string{c[:i], c[i:j], c[j:]})
				}
			}
			for _, pieces := range cuts {
				sp := &thinkSplitter{omitsOpen: tc.omitsOpen}
				var r, a strings.Builder
				for _, p := range pieces {
					pr, pa := sp.push(p)
					r.WriteString(pr)
					a.WriteString(pa)
					require.NotContains(t, a.String(), "PC1 has no", "reasoning reached the answer, cut %q", pieces)
				}
				er, ea := sp.end()
				r.WriteString(er)
				a.WriteString(ea)
				require.Equal(t, tc.reasoning, r.String(), "reasoning, cut %q", pieces)
				require.Equal(t, tc.reply, a.String(), "answer, cut %q", pieces)
			}
		})
	}
}

// The answer streams as it arrives once the reasoning is over; only a possible tag is held back.
func TestThinkSplitterStreamsTheAnswer(t *testing.T) {
	sp := &thinkSplitter{}
	r, a := sp.push("<think>plan the")
	require.Equal(t, "plan the", r)
	require.Empty(t, a)
	r, a = sp.push(" change</")
	require.Equal(t, " change", r, "the beginning of a closing tag waits")
	require.Empty(t, a)
	r, a = sp.push("think>\n\nDone")
	require.Empty(t, r)
	require.Equal(t, "Done", a)
	r, a = sp.push(".")
	require.Equal(t, ".", a)
	require.Empty(t, r)
}

// A model that may start without the opening tag is held back until its closing tag shows (or
// the answer ends): long answers are not searched again from the start on every chunk.
func TestThinkSplitterWithoutOpeningTagIsLinear(t *testing.T) {
	sp := &thinkSplitter{omitsOpen: true}
	for i := 0; i < 20000; i++ {
		r, a := sp.push("word ")
		require.Empty(t, r)
		require.Empty(t, a)
	}
	r, a := sp.end()
	require.Empty(t, r)
	require.Len(t, a, 5*20000)
}
