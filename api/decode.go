package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// decodeJSON reads a JSON object body of at most limit bytes into v and answers the client
// itself when that fails: 413 for a body too large, 400 for JSON that does not parse, 422 for a
// field of the wrong type. Unknown fields are ignored so newer clients keep working.
func decodeJSON(c *gin.Context, v any, limit int64) bool {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			abort(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body is larger than %d bytes.", limit))
			return false
		}
		abort(c, http.StatusBadRequest, "Reading the request body failed: "+err.Error())
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		abort(c, http.StatusBadRequest, "The request body is empty; send a JSON object.")
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr):
			field := typeErr.Field
			if field == "" {
				abort(c, http.StatusUnprocessableEntity, "The request body must be a JSON object.")
				return false
			}
			abort(c, http.StatusUnprocessableEntity, fmt.Sprintf("Field %q must be %s, not a JSON %s.", field, kindName(typeErr.Type.String()), typeErr.Value))
		case errors.As(err, &syntaxErr):
			abort(c, http.StatusBadRequest, fmt.Sprintf("The request body is not valid JSON (at byte %d).", syntaxErr.Offset))
		default:
			abort(c, http.StatusBadRequest, "The request body is not valid JSON: "+err.Error())
		}
		return false
	}
	return true
}

func kindName(goType string) string {
	t := strings.TrimPrefix(goType, "*")
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "float"), strings.HasPrefix(t, "int"):
		return "a number"
	default:
		return "of type " + t
	}
}
