package temporaldev

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// startLog is the output of the latest start: the log is appended to across
// starts.
func (s *Server) startLog() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	if i := strings.LastIndex(string(b), "\n=== "); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// logExcerpt quotes the latest start's output for an error: its first lines,
// where a Go panic puts its message, and its last ones, where the stack ends.
func (s *Server) logExcerpt() string {
	b := strings.TrimSpace(s.startLog())
	if b == "" {
		return ""
	}
	const headMax, tailMax = 1500, 2000
	if len(b) <= headMax+tailMax {
		return fmt.Sprintf("\n--- end of %s (the whole output of this start) ---\n%s", s.logPath, b)
	}
	head, tail := b[:headMax], b[len(b)-tailMax:]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return fmt.Sprintf("\n--- first lines of this start's output, from %s ---\n%s\n[… %d bytes left out …]\n--- end of %s ---\n%s",
		s.logPath, head, len(b)-len(head)-len(tail), s.logPath, tail)
}

// portTaken says whether the latest start's output names port as taken.
func (s *Server) portTaken(port int) bool {
	for _, l := range strings.Split(s.startLog(), "\n") {
		if strings.Contains(l, "address already in use") && strings.Contains(l, ":"+strconv.Itoa(port)+":") {
			return true
		}
	}
	return false
}

// failureLine is the one line of the latest start's output that best says
// why it failed (a panic's message, a bind error), for a one-line log.
func (s *Server) failureLine() string {
	lines := strings.Split(s.startLog(), "\n")
	for _, marker := range []string{"panic:", "address already in use", "fatal", "error"} {
		for _, l := range lines {
			if !strings.HasPrefix(l, "=== ") && strings.Contains(strings.ToLower(l), marker) {
				return truncateLine(strings.TrimSpace(l))
			}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "=== ") {
			return truncateLine(l)
		}
	}
	return ""
}

func truncateLine(l string) string {
	const max = 300
	if len(l) > max {
		return l[:max] + "…"
	}
	return l
}

func openLog(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogSize {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: open log: %w", err)
	}
	return f, nil
}
