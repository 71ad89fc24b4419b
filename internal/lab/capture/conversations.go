package capture

import (
	"sort"
)

// convState is a conversation being counted; order is when it was first seen.
type convState struct {
	c      Conversation
	order  int
	protos map[string]bool
}

// countConversation adds a packet to the conversation between its endpoints, whichever way
// it went.
func (a *Analyzer) countConversation(p packet, size int64) {
	if p.src == "" || p.dst == "" {
		return
	}
	key := [2]string{p.src, p.dst}
	if key[1] < key[0] {
		key[0], key[1] = key[1], key[0]
	}
	cs := a.convs[key]
	if cs == nil {
		a.convOrder++
		cs = &convState{c: Conversation{A: p.src, B: p.dst}, order: a.convOrder, protos: map[string]bool{}}
		a.convs[key] = cs
	}
	cs.c.Packets++
	cs.c.Bytes += size
	cs.protos[p.proto] = true
}

// conversations lists the busiest maxConversations conversations (ties in the order they
// started) and how many more there were.
func (a *Analyzer) conversations() ([]Conversation, int) {
	convs := make([]*convState, 0, len(a.convs))
	for _, c := range a.convs {
		convs = append(convs, c)
	}
	sort.Slice(convs, func(i, j int) bool {
		if convs[i].c.Packets != convs[j].c.Packets {
			return convs[i].c.Packets > convs[j].c.Packets
		}
		return convs[i].order < convs[j].order
	})
	out := []Conversation{}
	for i, c := range convs {
		if i == maxConversations {
			return out, len(convs) - i
		}
		conv := c.c
		for p := range c.protos {
			conv.Protocols = append(conv.Protocols, p)
		}
		sort.Strings(conv.Protocols)
		out = append(out, conv)
	}
	return out, 0
}
