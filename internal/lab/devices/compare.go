package devices

import "regexp"

// restartNoise are lines of a platform's configuration read back that change when the node
// starts again without anyone configuring anything: VPCS's UDP ports and its MAC address, which
// GNS3 hands out afresh after a restore.
var restartNoise = map[string]*regexp.Regexp{
	"vpcs": regexp.MustCompile(`^(LPORT|RHOST:PORT|MAC)\s*:`),
}

// KeptLines are the lines of a configuration read back (with ConfigCommand) that must be the
// same after the node is stopped and started again from what it saved: ConfigLines without what
// a restart changes by itself.
func (p *Profile) KeptLines(output string) []string {
	lines := p.ConfigLines(output)
	noise := restartNoise[p.Name]
	if noise == nil {
		return lines
	}
	out := lines[:0:0]
	for _, l := range lines {
		if !noise.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}
