package llmconfig

import (
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// anthropicDefaultMaxTokens is sent to Claude when the configuration sets no limit: Claude's
// API needs one, and every current Claude model can write this much.
const anthropicDefaultMaxTokens = 4096

// geminiDroppedKeywords are JSON-schema keywords Gemini's function declarations refuse (they
// accept an OpenAPI subset); the tools' meaning survives without them, as the model reads the
// descriptions and the tools validate their arguments themselves.
var geminiDroppedKeywords = []string{"$schema", "$id", "$comment", "additionalProperties", "patternProperties",
	"unevaluatedProperties", "uniqueItems", "examples"}

// ShapeRequest adapts a chat-completions request built for OpenAI to the provider of s: the
// fields it refuses are dropped and the values it reads differently are translated. Requests
// to providers without quirks are left as they are.
func ShapeRequest(s Settings, req *openai.ChatCompletionRequest) {
	if reasoningRequest.MatchString(s.Model) {
		// OpenAI's reasoning models (and go-openai's check of them) refuse max_tokens and any
		// temperature but the default.
		if req.MaxTokens > 0 {
			req.MaxCompletionTokens, req.MaxTokens = req.MaxTokens, 0
		}
		req.Temperature = 0
	}
	switch strings.ToLower(s.Provider) {
	case "anthropic":
		if req.Temperature > 1 {
			req.Temperature = 1 // Claude's range is 0 to 1
		}
		if req.MaxTokens == 0 && req.MaxCompletionTokens == 0 {
			req.MaxTokens = anthropicDefaultMaxTokens
		}
	case "google":
		req.StreamOptions = nil
		for i := range req.Tools {
			if f := req.Tools[i].Function; f != nil && f.Parameters != nil {
				f.Parameters = geminiSchema(f.Parameters)
			}
		}
	case "aws":
		req.StreamOptions = nil
	case "ollama":
		if req.ToolChoice == "none" {
			// Ollama ignores tool_choice, and models it serves call tools they were told not to:
			// a call that must answer in words is sent without them.
			req.Tools, req.ToolChoice = nil, nil
		}
	}
}

// geminiSchema returns the schema without the keywords Gemini refuses; a schema it cannot read
// as JSON is returned unchanged (the provider's answer will then say what is wrong).
func geminiSchema(params any) any {
	raw, err := json.Marshal(params)
	if err != nil {
		return params
	}
	var schema any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return params
	}
	cleanSchema(schema)
	out, err := json.Marshal(schema)
	if err != nil {
		return params
	}
	return json.RawMessage(out)
}

// cleanSchema walks a schema object. Only keywords are removed: the names under "properties" are
// the tool's argument names, whatever they are called.
func cleanSchema(node any) {
	obj, ok := node.(map[string]any)
	if !ok {
		return
	}
	for _, k := range geminiDroppedKeywords {
		delete(obj, k)
	}
	if c, ok := obj["const"]; ok {
		delete(obj, "const")
		if _, has := obj["enum"]; !has {
			obj["enum"] = []any{c}
		}
	}
	for _, k := range []string{"properties", "$defs", "definitions"} {
		if m, ok := obj[k].(map[string]any); ok {
			for _, sub := range m {
				cleanSchema(sub)
			}
		}
	}
	for _, k := range []string{"items", "not"} {
		switch v := obj[k].(type) {
		case map[string]any:
			cleanSchema(v)
		case []any:
			for _, sub := range v {
				cleanSchema(sub)
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := obj[k].([]any); ok {
			for _, sub := range list {
				cleanSchema(sub)
			}
		}
	}
}
