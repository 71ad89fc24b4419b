package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// projectArg is accepted (not advertised) by every tool: models used to the
// reference implementation send project_id, which must then match the
// chat's project.
type projectArg struct {
	ProjectID string `json:"project_id"`
}

func (p projectArg) check(env Env) error {
	if p.ProjectID != "" && p.ProjectID != env.ProjectID {
		return fmt.Errorf("this chat is bound to project %s; project_id %q is not allowed (leave project_id out)", env.ProjectID, p.ProjectID)
	}
	return nil
}

// decodeArgs decodes a normalised arguments object into dst, rejecting
// unknown fields and wrong types with messages a model can act on.
func decodeArgs(raw json.RawMessage, dst any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "arguments"
		}
		return fmt.Errorf("field %q must be %s, got %s", field, jsonKind(te.Type), te.Value)
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		return fmt.Errorf("unknown field %s; allowed fields: %s", strings.TrimPrefix(msg, "json: unknown field "), strings.Join(fieldNames(dst), ", "))
	}
	return fmt.Errorf("arguments are not valid: %v", err)
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

// fieldNames lists the JSON fields of the struct dst points to (the
// advertised ones; project_id is tolerated, not advertised).
func fieldNames(dst any) []string {
	t := reflect.TypeOf(dst)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out = append(out, name)
			}
		}
	}
	if t.Kind() == reflect.Struct {
		walk(t)
	}
	sort.Strings(out)
	return out
}

// coord validates a canvas coordinate: a whole number within GNS3's range.
func coord(name string, v *float64) (int, error) {
	if v == nil {
		return 0, fmt.Errorf("%s is required", name)
	}
	if *v != math.Trunc(*v) || math.IsInf(*v, 0) || math.IsNaN(*v) {
		return 0, fmt.Errorf("%s must be a whole number, got %v", name, *v)
	}
	if math.Abs(*v) > 100000 {
		return 0, fmt.Errorf("%s must be between -100000 and 100000, got %v", name, *v)
	}
	return int(*v), nil
}

// nodeRefs validates a list of node IDs or names.
func nodeRefs(field string, refs []string, max int) ([]string, error) {
	if len(refs) == 0 {
		return nil, fmt.Errorf("%s must list at least one node (node_id or name)", field)
	}
	if len(refs) > max {
		return nil, fmt.Errorf("%s lists %d nodes; at most %d per call", field, len(refs), max)
	}
	seen := map[string]bool{}
	var out []string
	for i, r := range refs {
		r = strings.TrimSpace(r)
		if r == "" {
			return nil, fmt.Errorf("%s[%d] is empty", field, i)
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out, nil
}
