package tools

import (
	"bufio"
	"context"
	"io"
	"time"
)

// pcapHeaderSize is the size of a pcap file's global header, which starts every capture stream.
const pcapHeaderSize = 24

// Waits between attempts to open a capture stream that had no header yet.
const (
	firstStreamRetry = 20 * time.Millisecond
	maxStreamRetry   = 500 * time.Millisecond
)

// openPcapStream opens the link's capture stream once its pcap header is there. Right after
// capture/start GNS3 may answer with an empty body, because uBridge has not yet written the
// header to the capture file; such a stream is opened again, within ctx (the capture's time),
// and is never handed to the decoder.
func openPcapStream(ctx context.Context, env Env, linkID string) (io.ReadCloser, error) {
	wait := firstStreamRetry
	for {
		body, err := env.GNS3.StreamCapture(ctx, env.ProjectID, linkID)
		if err != nil {
			return nil, err
		}
		br := bufio.NewReader(body)
		if _, err := br.Peek(pcapHeaderSize); err == nil {
			return bufferedBody{br, body}, nil
		}
		body.Close()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, maxStreamRetry)
	}
}

// bufferedBody reads through the buffer that holds the peeked header and closes the stream.
type bufferedBody struct {
	*bufio.Reader
	io.Closer
}
