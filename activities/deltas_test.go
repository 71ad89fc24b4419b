package activities

import (
	"reflect"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/relay"
)

func content(msg, text string) relay.Payload {
	return relay.Payload{Type: relay.TypeContent, MessageID: msg, SessionID: "s", Content: text}
}

// While an append is under way, the words that arrive join one event; a tool call keeps its
// place between them, and content of another message is never merged into this one's.
func TestDeltaQueueMergesWhatWaitsBehindAnAppend(t *testing.T) {
	started := make(chan relay.Payload)
	release := make(chan struct{})
	var got []relay.Payload
	q := newDeltaQueue(func(p relay.Payload) {
		started <- p
		<-release
		got = append(got, p)
	})

	q.push(content("m1", "Your "))
	// The first word goes out at once, before anything else is pushed.
	if p := <-started; p.Content != "Your " {
		t.Fatalf("first event %q, want the first word alone", p.Content)
	}
	q.push(content("m1", "lab "))
	q.push(content("m1", "has "))
	call := relay.Payload{Type: relay.TypeToolCall, SessionID: "s", ToolCall: &relay.ToolCall{ID: "c1", Function: relay.ToolCallFunction{Name: "list_nodes"}}}
	q.push(call)
	q.push(content("m1", "no "))
	q.push(content("m2", "nodes."))
	closed := make(chan struct{})
	go func() {
		for range 4 {
			release <- struct{}{}
			<-started
		}
		release <- struct{}{}
		close(closed)
	}()
	q.close()
	<-closed

	want := []relay.Payload{content("m1", "Your "), content("m1", "lab has "), call, content("m1", "no "), content("m2", "nodes.")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("published %+v\nwant      %+v", got, want)
	}
}

// A stream that ends with nothing queued closes at once, and close returns only after the last
// event was published.
func TestDeltaQueueCloseWaitsForTheLastEvent(t *testing.T) {
	q := newDeltaQueue(func(relay.Payload) { t.Error("nothing was pushed") })
	q.close()

	entered, release := make(chan struct{}), make(chan struct{})
	var published string
	q = newDeltaQueue(func(p relay.Payload) {
		close(entered)
		<-release
		published = p.Content
	})
	q.push(content("m", "done"))
	<-entered
	closed := make(chan struct{})
	go func() { q.close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("close returned while the last event was still being published")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-closed
	if published != "done" {
		t.Fatalf("published %q", published)
	}
}

// A thinking model's reasoning merges like its text: pieces of one message's reasoning join,
// and never with its text or another message's reasoning.
func TestDeltaQueueMergesReasoningApartFromText(t *testing.T) {
	started := make(chan relay.Payload)
	release := make(chan struct{})
	var got []relay.Payload
	q := newDeltaQueue(func(p relay.Payload) {
		started <- p
		<-release
		got = append(got, p)
	})
	thought := func(msg, text string) relay.Payload {
		return relay.Payload{Type: relay.TypeReasoning, MessageID: msg, SessionID: "s", Reasoning: text}
	}
	q.push(thought("m1", "Let "))
	<-started
	q.push(thought("m1", "me "))
	q.push(thought("m1", "see."))
	q.push(content("m1", "Two "))
	q.push(content("m1", "nodes."))
	q.push(thought("m2", "Next."))
	closed := make(chan struct{})
	go func() {
		for range 3 {
			release <- struct{}{}
			<-started
		}
		release <- struct{}{}
		close(closed)
	}()
	q.close()
	<-closed
	want := []relay.Payload{thought("m1", "Let "), thought("m1", "me see."), content("m1", "Two nodes."), thought("m2", "Next.")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("published %+v\nwant      %+v", got, want)
	}
}
