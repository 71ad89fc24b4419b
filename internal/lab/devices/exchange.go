package devices

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"
)

type exchangeOutcome struct {
	output     string
	prompt     string
	timedOut   bool
	unanswered string
	textEntry  string
	// overflow: the command printed more than the session's MaxOutput.
	overflow bool
}

type scanState struct {
	echoPos, echoEnd int
	bodyStart        int
	answeredAt       int
	answers          int
}

// step is what an exchange does after looking at the screen.
type step int

const (
	// stepRead: the screen says nothing decisive yet; read more.
	stepRead step = iota
	// stepLook: output arrived while waiting for silence; look at the screen again before reading.
	stepLook
	// stepDone: the outcome is decided.
	stepDone
)

// exchangeRun is one command's exchange in progress: the line sent, the screen positions found
// so far (the echo, the start of the output) and the interim prompts answered.
type exchangeRun struct {
	s        *Session
	cmd      string
	deadline time.Time
	// textLine: the line is free text inside a text entry (a banner body).
	textLine bool
	answers  []Answer
	st       scanState
	out      exchangeOutcome
}

// exchange writes one line and reads until the console is ready for the
// next. The reply is anchored on the echo of the line: anything before it
// (stale prompts, another client's output) is ignored, and the command is
// over when a prompt is the last line on the screen after the echo.
func (s *Session) exchange(ctx context.Context, cmd string, timeout time.Duration, extra []Answer, textLine bool) (exchangeOutcome, error) {
	x := &exchangeRun{s: s, cmd: cmd, textLine: textLine, st: scanState{echoPos: -1, echoEnd: -1, answeredAt: -1},
		answers: slices.Concat(extra, s.opts.Answers, s.profile.Answers)}
	s.scr.reset()
	line := cmd + s.profile.Newline
	if cmd == "" && s.profile.Wake != "" {
		line = s.profile.Wake // the platform's cheapest bare Enter
	}
	if err := s.send(line, false); err != nil {
		return x.out, err
	}
	x.deadline = time.Now().Add(timeout)
	if cmd == "" {
		x.st.echoPos, x.st.echoEnd = 0, 0
	}
	next := stepRead
	for {
		if next == stepRead {
			if _, err := s.fill(ctx, x.deadline); err != nil {
				x.out.output = s.partial(cmd, &x.st)
				if err == errQuiet {
					x.out.timedOut = true
					return x.out, nil
				}
				return x.out, err
			}
			if len(s.scr.buf)-max(x.st.echoEnd, 0) > s.opts.MaxOutput {
				x.out.overflow = true
				x.out.output = s.partial(cmd, &x.st)
				return x.out, nil
			}
		}
		var err error
		if next, err = x.look(ctx); err != nil || next == stepDone {
			return x.out, err
		}
	}
}

// look reads the screen as it stands and tells what the console is doing: still printing,
// taking free text, asking for text, paging, back at a prompt, or asking a question.
func (x *exchangeRun) look(ctx context.Context) (step, error) {
	buf := x.s.scr.buf
	if x.st.echoEnd < 0 {
		if i := bytes.Index(buf, []byte(x.cmd)); i >= 0 {
			x.st.echoPos, x.st.echoEnd = i, i+len(x.cmd)
		}
	}
	last, ls := lastLine(buf)
	if x.st.echoEnd < 0 {
		return x.withoutEcho(ctx, last, ls)
	}
	nl := bytes.IndexByte(buf[x.st.echoEnd:], '\n')
	if nl < 0 {
		return stepRead, nil
	}
	x.st.bodyStart = x.st.echoEnd + nl + 1
	switch {
	case x.textLine && !strings.Contains(x.cmd, x.s.textDelim):
		return x.freeText(ctx)
	case last == "":
		return x.textEntry(ctx)
	case ls < x.st.bodyStart:
		return stepRead, nil
	case x.paged(last, ls):
		return stepRead, x.s.send(x.s.profile.PagerKey, false)
	case x.s.profile.ModeOf(last) != ModeUnknown:
		return x.atPrompt(ctx, last, ls)
	}
	return x.interim(ctx, last, ls)
}

// settled waits for d of silence (ok); when output arrives instead, the next step is to look
// at the screen again.
func (x *exchangeRun) settled(ctx context.Context, d time.Duration) (next step, ok bool, err error) {
	ok, err = x.s.quietFor(ctx, x.deadline, d)
	if err != nil || !ok {
		return stepLook, false, err
	}
	return stepDone, true, nil
}

// withoutEcho: no echo (yet). A console that does not echo still ends with a prompt; that is
// accepted only after a longer silence.
func (x *exchangeRun) withoutEcho(ctx context.Context, last string, ls int) (step, error) {
	if ls == 0 || x.s.profile.ModeOf(last) == ModeUnknown {
		return stepRead, nil
	}
	next, ok, err := x.settled(ctx, 10*x.s.opts.PromptSettle+200*time.Millisecond)
	if ok {
		x.s.stats.NoEcho++
		x.st.bodyStart = 0
		x.out.output, x.out.prompt = x.s.body(x.cmd, &x.st, ls), last
	}
	return next, err
}

// freeText: a line of free text (a banner body), which the device echoes before it waits
// silently for the next one.
func (x *exchangeRun) freeText(ctx context.Context) (step, error) {
	next, ok, err := x.settled(ctx, x.s.opts.PromptSettle)
	if ok {
		x.out.textEntry = x.s.textDelim
	}
	return next, err
}

// textEntry: the output ends with a line break; on a platform with text entry that may be the
// device asking for free text ended by a delimiter.
func (x *exchangeRun) textEntry(ctx context.Context) (step, error) {
	p := x.s.profile
	if p.TextEntry == nil {
		return stepRead, nil
	}
	tail := x.s.scr.buf[x.st.bodyStart:]
	if len(tail) > 256 {
		tail = tail[len(tail)-256:]
	}
	m := p.TextEntry.FindSubmatch(tail)
	if m == nil {
		return stepRead, nil
	}
	next, ok, err := x.settled(ctx, x.s.opts.PromptSettle)
	if ok {
		x.out.textEntry = string(m[1])
		x.out.output = x.s.body(x.cmd, &x.st, len(x.s.scr.buf))
	}
	return next, err
}

// paged reports a pager prompt as the last line, and drops it from the screen.
func (x *exchangeRun) paged(last string, ls int) bool {
	if x.s.profile.Pager == nil {
		return false
	}
	loc := x.s.profile.Pager.FindStringIndex(last)
	if loc == nil {
		return false
	}
	x.s.scr.buf = x.s.scr.buf[:ls+loc[0]]
	x.s.stats.Pages++
	return true
}

// atPrompt: a prompt is the last line. The prompt the console showed before ends the command at
// once; another must stay quiet, so that a prompt-like line inside output does not end it.
func (x *exchangeRun) atPrompt(ctx context.Context, last string, ls int) (step, error) {
	if strings.TrimSpace(last) != strings.TrimSpace(x.s.prompt) {
		if next, ok, err := x.settled(ctx, x.s.opts.PromptSettle); !ok {
			return next, err
		}
	}
	x.out.output, x.out.prompt = x.s.body(x.cmd, &x.st, ls), last
	return stepDone, nil
}

// interim: the last line is neither a line break nor a prompt. A question the device waits on
// (it stays quiet) gets the first answer that applies, or ends the exchange unanswered.
func (x *exchangeRun) interim(ctx context.Context, last string, ls int) (step, error) {
	if ls == x.st.answeredAt {
		return stepRead, nil
	}
	var answer *Answer
	for i := range x.answers {
		if x.answers[i].applies(x.cmd, last) {
			answer = &x.answers[i]
			break
		}
	}
	if answer == nil && !x.s.profile.interim(last) && !passwordPrompt.MatchString(last) {
		return stepRead, nil
	}
	if next, ok, err := x.settled(ctx, x.s.opts.PromptSettle); !ok {
		return next, err
	}
	if answer == nil || x.st.answers >= 8 {
		x.out.unanswered = strings.TrimSpace(last)
		x.out.output = x.s.body(x.cmd, &x.st, len(x.s.scr.buf))
		return stepDone, nil
	}
	x.st.answeredAt = ls
	x.st.answers++
	x.s.stats.Answers++
	return stepRead, x.s.send(answer.Reply+x.s.profile.Newline, answer.Hidden)
}

// body extracts the command output between the echo line and the prompt,
// dropping repeated echoes (vpcs can echo a command twice when it arrives
// while readline switches terminal modes).
func (s *Session) body(cmd string, st *scanState, end int) string {
	buf := s.scr.buf
	if end < st.bodyStart {
		end = st.bodyStart
	}
	if end > len(buf) {
		end = len(buf)
	}
	if cmd != "" && st.echoPos >= 0 && st.bodyStart > st.echoPos &&
		strings.Count(string(buf[st.echoPos:st.bodyStart]), cmd) > 1 {
		s.stats.DupEchoes++
	}
	lines := strings.Split(string(buf[st.bodyStart:end]), "\n")
	i := 0
	for i < len(lines) {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			i++
			continue
		}
		if cmd != "" && (l == cmd || strings.Trim(strings.ReplaceAll(l, cmd, ""), " ") == "") {
			s.stats.DupEchoes++
			i++
			continue
		}
		break
	}
	lines = lines[i:]
	for len(lines) > 0 {
		l := strings.TrimSpace(lines[len(lines)-1])
		if l == "" || s.profile.PromptNoise != nil && s.profile.PromptNoise.MatchString(l) {
			lines = lines[:len(lines)-1]
			continue
		}
		break
	}
	return tidyOutput(strings.Join(lines, "\n"))
}

// partial returns what a command printed so far, for timeouts and errors.
func (s *Session) partial(cmd string, st *scanState) string {
	buf := s.scr.buf
	if st.echoEnd < 0 {
		return tidyOutput(string(buf))
	}
	if nl := bytes.IndexByte(buf[st.echoEnd:], '\n'); nl >= 0 {
		st.bodyStart = st.echoEnd + nl + 1
		return s.body(cmd, st, len(buf))
	}
	return ""
}
