package gns3

import (
	"context"
	"io"
	"net/http"
)

// Data link types GNS3 accepts when starting a capture.
const (
	DLTEthernet  = "DLT_EN10MB"
	DLTCiscoHDLC = "DLT_C_HDLC"
)

// StartCapture is POST /v3/projects/{p}/links/{l}/capture/start; the answer is the link, now
// capturing. GNS3 names the capture file itself.
func (c *Client) StartCapture(ctx context.Context, projectID, linkID, dataLinkType string) (*Link, error) {
	var l Link
	body := map[string]string{"data_link_type": dataLinkType}
	if err := c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/links/%s/capture/start", projectID, linkID), body, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// StopCapture is POST /v3/projects/{p}/links/{l}/capture/stop (204).
func (c *Client) StopCapture(ctx context.Context, projectID, linkID string) error {
	return c.send(ctx, http.MethodPost, pathf("/v3/projects/%s/links/%s/capture/stop", projectID, linkID), nil, nil)
}

// StreamCapture is GET /v3/projects/{p}/links/{l}/capture/stream: a pcap that grows while the
// capture runs and stays open until it stops or ctx ends. Only the answer's headers are bound
// by the server's timeout; the body is read for as long as the caller wants.
func (c *Client) StreamCapture(ctx context.Context, projectID, linkID string) (io.ReadCloser, error) {
	return c.openStream(ctx, pathf("/v3/projects/%s/links/%s/capture/stream", projectID, linkID), "")
}
