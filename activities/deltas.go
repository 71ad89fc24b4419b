package activities

import (
	"strings"
	"sync"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

// deltaQueue publishes one model call's deltas in order from a goroutine of its own, and
// merges the content deltas that arrive while the previous event is being appended into one
// content event. The first delta goes out at once, as before; only text that would have waited
// behind an append is merged, so nothing reaches the browser later than it would have. Under
// load it is what keeps a fast model from costing one event per word: every event is a write to
// the log, a wake-up and a read of every stream open on the turn, and a frame on each; in a
// burst of 100 new chats, where each append waits for a commit shared with other turns, a
// 13-word answer went out in a few events instead of 13.
type deltaQueue struct {
	publish func(relay.Payload)

	mu      sync.Mutex
	pending []relay.Payload
	// merged holds the text of pending's last element while more content joins it, so that a
	// long wait behind the log does not copy the text again for every word.
	merged strings.Builder
	closed bool

	wake chan struct{}
	done chan struct{}
}

func newDeltaQueue(publish func(relay.Payload)) *deltaQueue {
	q := &deltaQueue{publish: publish, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// push queues p behind what is queued; content of the same message as the last queued event is
// added to it.
func (q *deltaQueue) push(p relay.Payload) {
	q.mu.Lock()
	if n := len(q.pending); n > 0 && mergeable(q.pending[n-1], p) {
		if q.merged.Len() == 0 {
			q.merged.WriteString(q.pending[n-1].Content)
		}
		q.merged.WriteString(p.Content)
	} else {
		q.flushMergedLocked()
		q.pending = append(q.pending, p)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func mergeable(last, p relay.Payload) bool {
	return last.Type == relay.TypeContent && p.Type == relay.TypeContent &&
		last.MessageID == p.MessageID && last.SessionID == p.SessionID
}

// flushMergedLocked puts the merged text into the last pending event; q.mu must be held.
func (q *deltaQueue) flushMergedLocked() {
	if q.merged.Len() > 0 {
		q.pending[len(q.pending)-1].Content = q.merged.String()
		q.merged.Reset()
	}
}

// close publishes what is still queued and returns once it has been.
func (q *deltaQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
}

func (q *deltaQueue) run() {
	defer close(q.done)
	var batch []relay.Payload
	for {
		q.mu.Lock()
		q.flushMergedLocked()
		batch, q.pending = q.pending, batch[:0]
		closed := q.closed
		q.mu.Unlock()
		for i := range batch {
			q.publish(batch[i])
			batch[i] = relay.Payload{}
		}
		if len(batch) == 0 {
			if closed {
				return
			}
			<-q.wake
		}
	}
}
