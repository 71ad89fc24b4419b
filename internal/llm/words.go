package llm

import (
	"bytes"
	"encoding/json"
	"strings"
)

// providerWords finds what a provider said in an error body, whatever shape it has: an
// OpenAI-style object ({"error":{"message":…}}), Google's array of such objects, OpenRouter's
// wrapper whose error.metadata.raw holds the upstream provider's own error (itself any of these
// shapes, as text or as an object), a bare {"error":"…"} (Ollama), a flat {"message":…} or
// {"detail":…} (vLLM, FastAPI servers), or plain text. A JSON body of a shape none of these
// match says nothing the user could act on and gives "". The result is raw: callers clip it
// with providerMessage.
func providerWords(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		if looksLikeHTML(body) {
			return ""
		}
		return string(body)
	}
	return wordsOf(v, 0)
}

// maxWordsDepth bounds how deep providerWords follows an error nested in another (OpenRouter's
// raw holding a provider's error holding …): a body is not trusted to end.
const maxWordsDepth = 4

// wordsOf reads the message of one decoded error value.
func wordsOf(v any, depth int) string {
	if depth > maxWordsDepth {
		return ""
	}
	switch x := v.(type) {
	case string:
		// OpenRouter's metadata.raw is often the upstream body as text, JSON or not.
		var inner any
		if t := strings.TrimSpace(x); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			if json.Unmarshal([]byte(t), &inner) == nil {
				if w := wordsOf(inner, depth+1); w != "" {
					return w
				}
			}
		}
		return x
	case []any:
		// Google answers with an array holding one error object.
		for _, el := range x {
			if w := wordsOf(el, depth+1); w != "" {
				return w
			}
		}
	case map[string]any:
		if e, ok := x["error"]; ok && e != nil {
			if obj, ok := e.(map[string]any); ok {
				return objectWords(obj, depth)
			}
			if s, ok := e.(string); ok {
				return s
			}
		}
		return objectWords(x, depth)
	}
	return ""
}

// objectWords is the message of an error object, with what an upstream provider said when the
// object wraps one (OpenRouter: "Provider returned error" and the real reason in metadata.raw).
func objectWords(obj map[string]any, depth int) string {
	msg, _ := obj["message"].(string)
	if msg == "" {
		msg = detailWords(obj["detail"])
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		return msg
	}
	raw := meta["raw"]
	if raw == nil {
		return msg
	}
	upstream := wordsOf(raw, depth+1)
	if upstream == "" || upstream == msg {
		return msg
	}
	if name, _ := meta["provider_name"].(string); name != "" {
		upstream = name + ": " + upstream
	}
	if msg == "" {
		return upstream
	}
	return msg + " (" + upstream + ")"
}

// detailWords reads FastAPI's detail: a string, or a list of validation errors with a msg each.
func detailWords(d any) string {
	switch x := d.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, el := range x {
			if obj, ok := el.(map[string]any); ok {
				if m, ok := obj["msg"].(string); ok {
					parts = append(parts, m)
				}
			}
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

// looksLikeHTML reports whether a body is a web page rather than an API's answer.
func looksLikeHTML(body []byte) bool {
	b := bytes.TrimSpace(body)
	return bytes.HasPrefix(b, []byte("<")) || bytes.Contains(bytes.ToLower(b[:min(len(b), 512)]), []byte("<html"))
}
