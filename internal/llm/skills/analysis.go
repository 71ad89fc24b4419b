package skills

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/gns3-copilot/gns3-copilot/internal/lab/capture"
)

// analysisFile reads a packet-analysis file's checks. The file's fields and filters serve
// tshark, which the analysis does not run; its checks join the analysis where their
// condition and message use only fields it decodes (capture.CompileChecks), and the others
// are counted as skipped.
func (l *loader) analysisFile(rel string, root *yaml.Node) {
	if strings.HasPrefix(pathBase(rel), "_") {
		return // a reference for tshark's field names, not a protocol
	}
	if !l.required(rel, root, root, "the file", "name", "protocol_key") {
		return
	}
	checks := field(root, "checks")
	if checks == nil || checks.Tag == "!!null" {
		return
	}
	if checks.Kind != yaml.SequenceNode {
		l.badAt(rel, checks, "checks must be a list of {name, severity, message, condition}")
		return
	}
	var all []capture.Check
	for _, n := range checks.Content {
		if n.Kind != yaml.MappingNode {
			l.badAt(rel, n, "a check must be a mapping of name, severity, message, condition")
			continue
		}
		if !l.required(rel, n, n, "a check", "name", "message") {
			continue
		}
		c := capture.Check{Source: rel}
		c.Name, _ = text(n, "name")
		c.Severity, _ = text(n, "severity")
		c.Message, _ = text(n, "message")
		c.Condition, _ = text(n, "condition")
		all = append(all, c)
	}
	usable, skipped := capture.CompileChecks(all)
	l.set.Checks = append(l.set.Checks, usable...)
	l.set.SkippedChecks += len(skipped)
}

func pathBase(rel string) string {
	return rel[strings.LastIndex(rel, "/")+1:]
}
