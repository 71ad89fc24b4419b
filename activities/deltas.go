package activities

import (
	"sync"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

// deltaQueue publishes one model call's deltas in order from a goroutine of its own, and
// merges the content (or reasoning) deltas that arrive while the previous event is being
// appended into one event. The first delta goes out at once, as before; only text that would have waited
// behind an append is merged, so nothing reaches the browser later than it would have. Under
// load it is what keeps a fast model from costing one event per word: every event is a write to
// the log, a wake-up and a read of every stream open on the turn, and a frame on each; in a
// burst of 100 new chats, where each append waits for a commit shared with other turns, an
// answer the model sent in 14 chunks at once went out in 1 to 4 events instead of 14.
type deltaQueue struct {
	publish func(relay.Payload)

	mu      sync.Mutex
	pending []relay.Payload
	closed  bool

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
		q.pending[n-1].Content += p.Content
		q.pending[n-1].Reasoning += p.Reasoning
	} else {
		q.pending = append(q.pending, p)
	}
	q.mu.Unlock()
	q.signal()
}

// signal wakes run if it waits; a wake-up already due is enough.
func (q *deltaQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// mergeable: consecutive pieces of the same message's text, or of its reasoning, which a thinking
// model may stream for minutes in as many chunks as words.
func mergeable(last, p relay.Payload) bool {
	return last.Type == p.Type && (p.Type == relay.TypeContent || p.Type == relay.TypeReasoning) &&
		last.MessageID == p.MessageID && last.SessionID == p.SessionID
}

// close publishes what is still queued and returns once it has been.
func (q *deltaQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
	<-q.done
}

func (q *deltaQueue) run() {
	defer close(q.done)
	var batch []relay.Payload
	for {
		q.mu.Lock()
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
