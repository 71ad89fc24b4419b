package gns3

import (
	"context"
	"net/http"
)

// Link filter types: what uBridge can do to the packets crossing a link. A filter's values are
// a list (GNS3 drops a filter whose first value is 0 or empty: it is not active).
const (
	FilterFrequencyDrop = "frequency_drop" // [N]: drop every Nth packet; -1 drops everything
	FilterPacketLoss    = "packet_loss"    // [percent]
	FilterDelay         = "delay"          // [latency ms, jitter ms]
	FilterCorrupt       = "corrupt"        // [percent]
	FilterBPF           = "bpf"            // ["expression\nexpression"]: drop what matches
)

// LinkFilters are a link's active filters by type, e.g. {"delay": [200, 20], "packet_loss": [30]}.
type LinkFilters map[string][]any

// AvailableFilter is one entry of GET …/links/{l}/available_filters.
type AvailableFilter struct {
	Type        string            `json:"type"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Parameters  []FilterParameter `json:"parameters"`
}

// FilterParameter is one value of a filter, in order: "int" with its range, or "text".
type FilterParameter struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Minimum *int   `json:"minimum,omitempty"`
	Maximum *int   `json:"maximum,omitempty"`
	Unit    string `json:"unit,omitempty"`
}

// LinkUpdate is the body of PUT /v3/projects/{p}/links/{l}; nil fields are left unchanged.
// Filters replaces the link's whole set ({} clears it).
type LinkUpdate struct {
	Filters *LinkFilters `json:"filters,omitempty"`
	Suspend *bool        `json:"suspend,omitempty"`
}

// AvailableFilters is GET /v3/projects/{p}/links/{l}/available_filters. It is empty when no
// node of the link can run filters (a link between two switches).
func (c *Client) AvailableFilters(ctx context.Context, projectID, linkID string) ([]AvailableFilter, error) {
	fs := []AvailableFilter{}
	if err := c.get(ctx, pathf("/v3/projects/%s/links/%s/available_filters", projectID, linkID), &fs); err != nil {
		return nil, err
	}
	return fs, nil
}

// UpdateLink is PUT /v3/projects/{p}/links/{l}; the answer is the link as it now is.
func (c *Client) UpdateLink(ctx context.Context, projectID, linkID string, upd LinkUpdate) (*Link, error) {
	var l Link
	if err := c.send(ctx, http.MethodPut, pathf("/v3/projects/%s/links/%s", projectID, linkID), upd, &l); err != nil {
		return nil, err
	}
	return &l, nil
}
