package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A chat request is refused with the right status before anything is stored, and a session id
// the client chose comes back in canonical form.
func TestChatRequestCheck(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(f float64) *float64 { return &f }
	for name, tc := range map[string]struct {
		req    chatRequest
		status int
		says   string
	}{
		"no message":        {chatRequest{}, http.StatusUnprocessableEntity, "message is required"},
		"blank message":     {chatRequest{Message: str(" \n")}, http.StatusUnprocessableEntity, "message is required"},
		"too long":          {chatRequest{Message: str(strings.Repeat("x", 11))}, http.StatusRequestEntityTooLarge, "limit is 10 bytes"},
		"not UTF-8":         {chatRequest{Message: str("a\xff")}, http.StatusUnprocessableEntity, "UTF-8"},
		"bad session id":    {chatRequest{Message: str("hi"), SessionID: str("nope")}, http.StatusUnprocessableEntity, "session_id must be a UUID"},
		"nil session id":    {chatRequest{Message: str("hi"), SessionID: str("00000000-0000-0000-0000-000000000000")}, http.StatusUnprocessableEntity, "session_id"},
		"temperature":       {chatRequest{Message: str("hi"), Temperature: num(2.5)}, http.StatusUnprocessableEntity, "temperature"},
		"interaction mode":  {chatRequest{Message: str("hi"), Mode: str("voice")}, http.StatusUnprocessableEntity, `mode must be "text"`},
		"fine":              {chatRequest{Message: str("hi"), Mode: str("text"), Temperature: num(0)}, 0, ""},
		"empty session id":  {chatRequest{Message: str("hi"), SessionID: str("")}, 0, ""},
		"message at limit":  {chatRequest{Message: str(strings.Repeat("x", 10))}, 0, ""},
		"chosen session id": {chatRequest{Message: str("hi"), SessionID: str("{5F1C0A9E-7D3B-4A57-9D1E-0C2B8F4E6A11}")}, 0, ""},
	} {
		t.Run(name, func(t *testing.T) {
			id, status, problem := tc.req.check(10)
			require.Equal(t, tc.status, status, problem)
			require.Contains(t, problem, tc.says)
			if name == "chosen session id" {
				require.Equal(t, "5f1c0a9e-7d3b-4a57-9d1e-0c2b8f4e6a11", id)
			}
		})
	}
}
