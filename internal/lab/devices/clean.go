package devices

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

type escState uint8

const (
	escNone escState = iota
	escStart
	escCSI
	escOSC
	escOSCEsc
	escCharset
)

// screenText turns console bytes into plain text the way a terminal would
// show it, closely enough for parsing: CR and NUL vanish, backspaces and
// cursor-left sequences erase (pagers use them to wipe "--More--"), and
// every other ANSI escape is dropped. It is streaming because escape
// sequences are routinely split across reads.
type screenText struct {
	buf   []byte
	esc   escState
	param []byte
}

func (s *screenText) reset() {
	s.buf = s.buf[:0]
}

func (s *screenText) write(p []byte) {
	for _, b := range p {
		switch s.esc {
		case escStart:
			switch b {
			case '[':
				s.esc = escCSI
				s.param = s.param[:0]
			case ']':
				s.esc = escOSC
			case '(', ')', '*', '+':
				s.esc = escCharset
			default:
				s.esc = escNone
			}
			continue
		case escCSI:
			if b >= 0x40 && b <= 0x7e {
				if b == 'D' {
					n := 1
					if v, err := strconv.Atoi(string(s.param)); err == nil && v > 0 {
						n = v
					}
					s.erase(n)
				}
				s.esc = escNone
			} else if len(s.param) < 32 {
				s.param = append(s.param, b)
			}
			continue
		case escOSC:
			if b == 0x07 {
				s.esc = escNone
			} else if b == 0x1b {
				s.esc = escOSCEsc
			}
			continue
		case escOSCEsc:
			s.esc = escNone
			continue
		case escCharset:
			s.esc = escNone
			continue
		}
		switch {
		case b == 0x1b:
			s.esc = escStart
		case b == '\b':
			s.erase(1)
		case b == '\n' || b == '\t' || b >= 0x20 && b != 0x7f:
			s.buf = append(s.buf, b)
		}
	}
}

// erase removes up to n characters from the current line; it never crosses
// a line break, just like a cursor cannot move above the line it is on.
func (s *screenText) erase(n int) {
	for ; n > 0 && len(s.buf) > 0; n-- {
		if s.buf[len(s.buf)-1] == '\n' {
			return
		}
		_, size := utf8.DecodeLastRune(s.buf)
		s.buf = s.buf[:len(s.buf)-size]
	}
}

// StripANSI removes terminal escape sequences, carriage returns and other
// control characters from console output, applying backspaces.
func StripANSI(text string) string {
	var s screenText
	s.write([]byte(text))
	return string(s.buf)
}

// lastLine returns the text after the final newline and where it starts.
func lastLine(b []byte) (string, int) {
	i := bytes.LastIndexByte(b, '\n') + 1
	return string(b[i:]), i
}

// tidyOutput trims trailing spaces from every line and drops blank lines at
// both ends, leaving indentation alone because it carries meaning in
// configuration listings.
func tidyOutput(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}
