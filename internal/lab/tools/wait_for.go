package tools

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gns3-copilot/gns3-copilot/internal/domain"
	"github.com/gns3-copilot/gns3-copilot/internal/lab/devices"
)

// waitForSchema is the call's wait_for list, for every device.
const waitForSchema = `{"type":"array","maxItems":10,"description":"Checks that wait for the network after the commands: the command is run again ` +
	`(no faster than every 2 s) until its output matches expect at least count times, or timeout_seconds pass.","items":{"type":"object","properties":{` +
	`"command":{"type":"string","description":"A read-only show command, e.g. \"show ip ospf neighbor\"."},` +
	`"expect":{"type":"string","description":"Text the output must contain (case does not matter), or a regular expression written /like this/."},` +
	`"count":{"type":"integer","minimum":1,"description":"How many matches make the check hold (default 1), e.g. 2 for two Full neighbours."},` +
	`"timeout_seconds":{"type":"integer","minimum":1,"maximum":300,"description":"How long to wait at most (default 60)."}},` +
	`"required":["command","expect"],"additionalProperties":false}}`

// deviceWaitForSchema is one device's wait_for list. Its checks are the call's kind, described
// there once: the two lists' full schemas were a kilobyte each, sent with every model call.
const deviceWaitForSchema = `{"type":"array","maxItems":10,"description":"Checks for this device only, each as in the call's wait_for.",` +
	`"items":{"type":"object"}}`

// waitForArg is one wait_for entry as the model wrote it; absent numbers take their defaults,
// and present ones are checked.
type waitForArg struct {
	Command        string `json:"command"`
	Expect         string `json:"expect"`
	Count          *int   `json:"count"`
	TimeoutSeconds *int   `json:"timeout_seconds"`
}

// deviceWaits are a call's checked wait_for lists: the call's own, for every device, and each
// device_configs entry's.
type deviceWaits struct {
	all       []domain.WaitCheck
	perDevice [][]domain.WaitCheck
}

// forDevice is the checks of device_configs entry i: the call's, then the entry's own.
func (w deviceWaits) forDevice(i int) []domain.WaitCheck {
	if len(w.all) == 0 && len(w.perDevice[i]) == 0 {
		return nil
	}
	return append(append([]domain.WaitCheck(nil), w.all...), w.perDevice[i]...)
}

// checkWaits checks every wait_for of a call before anything runs: a bad check refuses the
// whole call, so nothing is applied on the strength of a wait that could never be evaluated.
func checkWaits(a deviceArgs, policy *devices.Policy) (deviceWaits, error) {
	w := deviceWaits{perDevice: make([][]domain.WaitCheck, len(a.DeviceConfigs))}
	var err error
	if w.all, err = waitChecks("wait_for", a.WaitFor, policy); err != nil {
		return w, err
	}
	for i, dc := range a.DeviceConfigs {
		where := fmt.Sprintf("device_configs[%d].wait_for", i)
		if dc.DeviceName != "" {
			where = fmt.Sprintf("wait_for of %s", dc.DeviceName)
		}
		if w.perDevice[i], err = waitChecks(where, dc.WaitFor, policy); err != nil {
			return w, err
		}
		if n := len(w.all) + len(w.perDevice[i]); n > domain.MaxWaitChecks {
			return w, fmt.Errorf("%s: at most %d wait_for checks per device (got %d)", where, domain.MaxWaitChecks, n)
		}
	}
	return w, nil
}

func waitChecks(where string, args []waitForArg, policy *devices.Policy) ([]domain.WaitCheck, error) {
	if len(args) > domain.MaxWaitChecks {
		return nil, fmt.Errorf("%s: at most %d checks (got %d)", where, domain.MaxWaitChecks, len(args))
	}
	var out []domain.WaitCheck
	for i, w := range args {
		c, err := waitCheck(w, policy)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %v; nothing was run", where, i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func waitCheck(w waitForArg, policy *devices.Policy) (domain.WaitCheck, error) {
	c := domain.WaitCheck{Command: strings.TrimSpace(w.Command), Expect: w.Expect, Count: 1, TimeoutSeconds: domain.DefaultWaitSeconds}
	switch {
	case c.Command == "":
		return c, fmt.Errorf("command is empty; give the show command to run again")
	case strings.ContainsAny(c.Command, "\r\n"):
		return c, fmt.Errorf("command holds a line break; one command per check")
	case len(c.Command) > maxCommandLength:
		return c, fmt.Errorf("command is longer than %d characters", maxCommandLength)
	case entersConfigMode(c.Command):
		return c, fmt.Errorf("command %q enters configuration mode; a check must only read", c.Command)
	case strings.TrimSpace(c.Expect) == "":
		return c, fmt.Errorf("expect is empty; give the text (or /regular expression/) the output must show")
	}
	if ok, reason := policy.Check(c.Command); !ok {
		return c, fmt.Errorf("command %q is not allowed: %s", c.Command, reason)
	}
	if w.Count != nil {
		if *w.Count < 1 {
			return c, fmt.Errorf("count must be at least 1 (got %d)", *w.Count)
		}
		c.Count = *w.Count
	}
	if w.TimeoutSeconds != nil {
		if *w.TimeoutSeconds < 1 || *w.TimeoutSeconds > domain.MaxWaitSeconds {
			return c, fmt.Errorf("timeout_seconds must be 1 to %d (got %d)", domain.MaxWaitSeconds, *w.TimeoutSeconds)
		}
		c.TimeoutSeconds = *w.TimeoutSeconds
	}
	if pattern, ok := regexpExpect(c.Expect); ok {
		if _, err := regexp.Compile(pattern); err != nil {
			return c, fmt.Errorf("expect %s is not a valid regular expression: %v", c.Expect, err)
		}
		c.Regexp = true
	}
	return c, nil
}

// regexpExpect tells an expect written /…/ and returns the expression inside.
func regexpExpect(expect string) (string, bool) {
	if len(expect) >= 3 && strings.HasPrefix(expect, "/") && strings.HasSuffix(expect, "/") {
		return expect[1 : len(expect)-1], true
	}
	return "", false
}

// WaitMatches counts the matches of a check's expect in an output: non-overlapping
// occurrences of the text, ignoring case, or matches of the regular expression.
func WaitMatches(c domain.WaitCheck, output string) int {
	if pattern, ok := regexpExpect(c.Expect); ok && c.Regexp {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return 0
		}
		return len(re.FindAllStringIndex(output, -1))
	}
	return strings.Count(strings.ToLower(output), strings.ToLower(c.Expect))
}

// WaitProgress words where a check stands, as the event log shows it: "1 of 2 Full, 9 s".
func WaitProgress(c domain.WaitCheck, matches int, seconds float64) string {
	return fmt.Sprintf("%d of %d %s, %.0f s", min(matches, c.Count), c.Count, c.Expect, seconds)
}
