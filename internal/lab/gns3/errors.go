package gns3

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Sentinels for errors.Is. An *APIError matches the sentinel of its HTTP
// status; an *UnreachableError matches ErrUnreachable.
var (
	ErrUnauthorized = errors.New("gns3: unauthorized")
	ErrForbidden    = errors.New("gns3: forbidden")
	ErrNotFound     = errors.New("gns3: not found")
	ErrConflict     = errors.New("gns3: conflict")
	ErrValidation   = errors.New("gns3: validation failed")
	ErrServer       = errors.New("gns3: server error")
	ErrUnreachable  = errors.New("gns3: server unreachable")
)

// APIError is a non-2xx answer from GNS3. Message is GNS3's own `message`
// (or FastAPI's `detail`), made readable; Raw keeps the text as received.
type APIError struct {
	Status  int
	Message string
	Method  string
	Path    string
	Raw     string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("GNS3 %s %s: %d %s: %s", e.Method, e.Path, e.Status, http.StatusText(e.Status), msg)
}

// Is lets callers write errors.Is(err, gns3.ErrNotFound).
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrValidation:
		return e.Status == http.StatusUnprocessableEntity
	case ErrServer:
		return e.Status >= 500
	}
	return false
}

// UnreachableError means no HTTP answer came back: connection refused, DNS,
// TLS, or the per-request timeout elapsed.
type UnreachableError struct {
	URL      string // base URL of the GNS3 server
	Method   string
	Path     string
	TimedOut bool
	Err      error
}

func (e *UnreachableError) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("the GNS3 server at %s timed out (%s %s): %v", e.URL, e.Method, e.Path, e.Err)
	}
	return fmt.Sprintf("the GNS3 server at %s is unreachable (%s %s): %v", e.URL, e.Method, e.Path, e.Err)
}

func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }
func (e *UnreachableError) Unwrap() error        { return e.Err }

// Retryable reports whether repeating the same request later may succeed:
// the server was unreachable, overloaded or failed internally. 4xx answers
// are the caller's problem and never retryable.
func Retryable(err error) bool {
	if errors.Is(err, ErrUnreachable) {
		return true
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status >= 500 || ae.Status == http.StatusTooManyRequests
	}
	return false
}

// pydanticItem matches one entry of the Python repr GNS3 puts in a 422
// message: {'type': 'missing', 'loc': ('body', 'x'), 'msg': 'Field required', ...}.
var pydanticItem = regexp.MustCompile(`'loc':\s*\(([^)]*)\),\s*'msg':\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")`)

// readableValidation turns the Python-repr list of a 422 into
// "body.x: Field required; body.y: Field required". Anything it cannot
// parse is returned unchanged.
func readableValidation(raw string) string {
	s := strings.TrimSpace(raw)
	if !strings.HasPrefix(s, "[{") {
		return raw
	}
	matches := pydanticItem.FindAllStringSubmatch(s, -1)
	if len(matches) == 0 {
		return raw
	}
	parts := make([]string, 0, len(matches))
	for _, m := range matches {
		var loc []string
		for _, p := range strings.Split(m[1], ",") {
			p = strings.Trim(strings.TrimSpace(p), `'"`)
			if p != "" {
				loc = append(loc, p)
			}
		}
		msg := m[2]
		if msg == "" {
			msg = m[3]
		}
		if len(loc) > 0 {
			parts = append(parts, strings.Join(loc, ".")+": "+msg)
		} else {
			parts = append(parts, msg)
		}
	}
	return strings.Join(parts, "; ")
}
