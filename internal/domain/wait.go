package domain

import "time"

// WaitCheck is a wait_for check of a device tool call: after the call's commands, the device
// runs Command again and again until its output matches Expect at least Count times, or
// TimeoutSeconds pass. It travels in the device plan, so its JSON keys must not change.
type WaitCheck struct {
	Command string `json:"command"`
	Expect  string `json:"expect"`
	// Regexp says Expect is a regular expression (given as /…/); otherwise it is a substring.
	Regexp         bool `json:"regexp,omitempty"`
	Count          int  `json:"count"`
	TimeoutSeconds int  `json:"timeout_seconds"`
}

// WaitOutcome is how a wait_for check ended: whether it held, with how many matches on the
// last attempt, after how many attempts and seconds. The output itself stays in the device
// records, out of workflow histories.
type WaitOutcome struct {
	Held     bool    `json:"held"`
	Matches  int     `json:"matches"`
	Attempts int     `json:"attempts"`
	Seconds  float64 `json:"seconds"`
	Error    string  `json:"error,omitempty"`
}

// Bounds of wait_for: a check waits at most MaxWaitSeconds, and a console is asked again no
// sooner than MinWaitPoll after the last attempt ended.
const (
	MaxWaitSeconds     = 300
	DefaultWaitSeconds = 60
	MaxWaitChecks      = 10 // per device
	MinWaitPoll        = 2 * time.Second
	maxWaitPoll        = 10 * time.Second
)

// WaitPoll is how long to wait before the next attempt of the pending checks (indexes into
// checks), elapsed into the wait: about thirty attempts over the shortest timeout, between
// MinWaitPoll and 10 s, and no later than that check's deadline. ok is false when no pending
// check has MinWaitPoll left before its deadline.
func WaitPoll(checks []WaitCheck, pending []int, elapsed time.Duration) (wait time.Duration, ok bool) {
	for _, i := range pending {
		timeout := time.Duration(checks[i].TimeoutSeconds) * time.Second
		left := timeout - elapsed
		if left < MinWaitPoll {
			continue
		}
		d := min(max(timeout/30, MinWaitPoll), maxWaitPoll, left)
		if !ok || d < wait {
			wait, ok = d, true
		}
	}
	return wait, ok
}
