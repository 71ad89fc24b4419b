package models

import "encoding/json"

// The metadata of a model-context row (ChatMessage.ModelContext) may restate the lab: what that
// row and every model-context row before it amount to. The copilot writes it, and reads it back
// both to tell the model only what changed since and to open a request whose conversation starts
// after those rows; one encoding here keeps the writer and both readers agreed.

type contextMetadata struct {
	Restate string `json:"restate"`
}

// ContextMetadata is the metadata of a model-context row that restates the lab as restate.
func ContextMetadata(restate string) string {
	b, _ := json.Marshal(contextMetadata{Restate: restate}) // a string field cannot fail
	return string(b)
}

// Restatement is the restatement in a model-context row's metadata, "" when it has none.
func Restatement(metadata string) string {
	if metadata == "" {
		return ""
	}
	var meta contextMetadata
	if json.Unmarshal([]byte(metadata), &meta) != nil {
		return ""
	}
	return meta.Restate
}
