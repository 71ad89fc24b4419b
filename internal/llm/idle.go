package llm

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// DefaultIdleTimeout is how long a streamed call may go without a byte from its provider before
// it is taken for stalled. It bounds silence, not the call: a model that thinks for many minutes
// streams its reasoning (or, like OpenRouter and DeepSeek, keep-alive comments) all along and is
// never cut off, while a provider that hangs is retried within minutes instead of holding the
// turn until the activity's own limit. Five minutes is what the whole call was allowed before
// this watchdog existed, so no provider that worked then is cut off now: a model that thinks
// without streaming anything (OpenAI's reasoning models stream nothing of their thinking) gets
// that long before its first token.
const DefaultIdleTimeout = 5 * time.Minute

// ErrStalled is under the Error of a streamed call whose provider sent nothing, not even a
// keep-alive, for the client's idle timeout: another attempt may find it answering.
var ErrStalled = errors.New("the provider sent nothing for the idle timeout")

// idleWatch cancels a call's context when nothing has arrived for d. Every byte counts as life:
// the response's headers, data of any kind (reasoning included) and SSE comments alike.
type idleWatch struct {
	d      time.Duration
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// watchIdle returns ctx, ended with ErrStalled once d passes without alive being called; d <= 0
// watches nothing. stop must be called when the call is over.
func watchIdle(ctx context.Context, d time.Duration) (context.Context, *idleWatch) {
	w := &idleWatch{d: d}
	if d <= 0 {
		return ctx, w
	}
	ctx, w.cancel = context.WithCancelCause(ctx)
	w.timer = time.AfterFunc(d, func() { w.cancel(ErrStalled) })
	return ctx, w
}

// alive says the provider sent something: the silence starts again from now.
func (w *idleWatch) alive() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.timer.Reset(w.d)
	}
}

func (w *idleWatch) stop() {
	if w.timer == nil {
		return
	}
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel(context.Canceled)
}

// stalled reports whether the watch ended ctx.
func stalled(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrStalled) }

// reader is r with every read that returns bytes counted as life.
func (w *idleWatch) reader(r io.Reader) io.Reader {
	if w.timer == nil {
		return r
	}
	return idleReader{r: r, w: w}
}

type idleReader struct {
	r io.Reader
	w *idleWatch
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.alive()
	}
	return n, err
}
