package llm

import (
	"strings"
	"unicode"
)

const (
	openTag  = "<think>"
	closeTag = "</think>"
)

// thinkSplitter separates reasoning a model writes inside its content, as <think>…</think>, from
// the answer while the content streams: a tag may be cut anywhere between two chunks, the stream
// may end inside the reasoning (the model ran out of tokens while thinking), and some models'
// templates put the opening tag into the prompt, so their output starts with reasoning and only a
// closing tag shows where it ends. Only a think block at the start of the content is reasoning: a
// tag later in an answer is the answer's own text.
type thinkSplitter struct {
	phase thinkPhase
	// held is text not given out yet: the start of the content while it may still become
	// "<think>", the end of the reasoning while it may still become "</think>", or (phaseMaybe)
	// all of the content so far.
	held string
	// omitsOpen: the model may start with reasoning without the opening tag.
	omitsOpen bool
	// scanned is how much of held phaseMaybe has searched for the closing tag.
	scanned int
}

type thinkPhase int

const (
	phaseStart    thinkPhase = iota // nothing but white space seen yet
	phaseThinking                   // inside <think>
	phaseMaybe                      // no opening tag, but a closing one may still come
	phaseAfter                      // after </think>: white space before the answer is dropped
	phaseAnswer
)

// push takes the next piece of content and returns what of it is known to be reasoning and
// answer.
func (t *thinkSplitter) push(text string) (reasoning, answer string) {
	var r, a strings.Builder
	t.feed(text, &r, &a)
	return r.String(), a.String()
}

func (t *thinkSplitter) feed(text string, r, a *strings.Builder) {
	for text != "" || t.held != "" {
		switch t.phase {
		case phaseAnswer:
			a.WriteString(t.held)
			a.WriteString(text)
			t.held = ""
			return
		case phaseStart:
			t.held += text
			text = ""
			lead := strings.TrimLeftFunc(t.held, unicode.IsSpace)
			switch {
			case lead == "" || (len(lead) < len(openTag) && strings.HasPrefix(openTag, lead)):
				return // white space, or the tag's beginning: wait for more
			case strings.HasPrefix(lead, openTag):
				t.phase, t.held, text = phaseThinking, "", lead[len(openTag):]
			case t.omitsOpen:
				t.phase = phaseMaybe
			default:
				t.phase = phaseAnswer
			}
		case phaseThinking:
			data := t.held + text
			text, t.held = "", ""
			if i := strings.Index(data, closeTag); i >= 0 {
				r.WriteString(data[:i])
				t.phase, text = phaseAfter, data[i+len(closeTag):]
				continue
			}
			keep := partialSuffix(data, closeTag)
			r.WriteString(data[:len(data)-keep])
			t.held = data[len(data)-keep:]
			return
		case phaseMaybe:
			t.held += text
			text = ""
			// Only the new text, and a tag begun just before it, can hold the closing tag.
			from := max(0, t.scanned-len(closeTag)+1)
			if i := strings.Index(t.held[from:], closeTag); i >= 0 {
				i += from
				r.WriteString(t.held[:i])
				t.phase, text, t.held = phaseAfter, t.held[i+len(closeTag):], ""
				continue
			}
			t.scanned = len(t.held)
			return
		case phaseAfter:
			data := strings.TrimLeftFunc(t.held+text, unicode.IsSpace)
			text, t.held = "", ""
			if data == "" {
				return
			}
			t.phase, text = phaseAnswer, data
		}
	}
}

// end is the end of the content: what was held back is given out for what it turned out to be.
func (t *thinkSplitter) end() (reasoning, answer string) {
	held := t.held
	t.held = ""
	switch t.phase {
	case phaseThinking:
		// The model stopped while thinking: there is no answer, and the cut tag is reasoning.
		return held, ""
	case phaseStart, phaseMaybe, phaseAnswer:
		// No reasoning after all: what was held is the answer.
		return "", held
	}
	return "", ""
}

// partialSuffix is the length of the longest end of s that begins tag without being all of it.
func partialSuffix(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
