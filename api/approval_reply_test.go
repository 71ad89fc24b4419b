package api

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gns3-copilot/gns3-copilot/workflows"
)

func TestParseReply(t *testing.T) {
	const yes, no = workflows.DecisionApprove, workflows.DecisionReject
	cases := []struct {
		msg      string
		decision string
		standing bool
		comment  bool // the message itself is the comment
	}{
		{"approve", yes, false, false},
		{"Approve", yes, false, false},
		{"  YES  ", yes, false, false},
		{"yes please", yes, false, false},
		{"Yes, please!", yes, false, false},
		{"ok, go", yes, false, false},
		{"OK. Go ahead.", yes, false, false},
		{"go ahead", yes, false, false},
		{"confirm", yes, false, false},
		{"looks good, approve", yes, false, false},
		{"looks wrong", no, false, true},
		{"sure, do it", yes, false, false},
		{"approve all", yes, true, false},
		{"Approve all, thanks", yes, true, false},
		{"yes to all", yes, true, false},
		{"ok to everything", yes, true, false},
		{"批准", yes, false, false},
		{"同意", yes, false, false},
		{"确认。", yes, false, false},
		{"是", yes, false, false},
		{"好的", yes, false, false},
		{"全部批准", yes, true, false},
		{"批准全部！", yes, true, false},
		{"reject", no, false, false},
		{"No.", no, false, false},
		{"cancel", no, false, false},
		{"拒绝", no, false, false},
		{"不", no, false, false},
		{"no, use 10.9.0.2/24 instead", no, false, true},
		{"yes, but use 10.9.0.2/24 instead", no, false, true},
		{"use 10.9.0.2/24 on PC1 instead", no, false, true},
		{"approve PC1 only", no, false, true},
		{"不对，改成 10.9.0.2", no, false, true},
	}
	for _, c := range cases {
		d, standing, comment := ParseReply(c.msg)
		assert.Equal(t, c.decision, d, "%q", c.msg)
		assert.Equal(t, c.standing, standing, "%q: standing", c.msg)
		if c.comment {
			assert.Equal(t, c.msg, comment, "%q: the message is the comment", c.msg)
		} else {
			assert.Empty(t, comment, "%q: a plain yes or no has no comment", c.msg)
		}
	}
}
