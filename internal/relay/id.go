package relay

import (
	"strconv"
	"strings"
)

// entryID is a parsed event ID. Both logs use Redis's stream ID form, `<unix-ms>-<seq>`, so an SSE
// client's Last-Event-ID stays valid whichever log is configured.
type entryID struct {
	ms, seq uint64
}

func (a entryID) less(b entryID) bool {
	return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq)
}

func (a entryID) String() string {
	return strconv.FormatUint(a.ms, 10) + "-" + strconv.FormatUint(a.seq, 10)
}

// isMax reports whether no ID can follow a: an exclusive range after it is empty (and Redis rejects
// it as a range start).
func (a entryID) isMax() bool { return a.ms == ^uint64(0) && a.seq == ^uint64(0) }

// parseAfterID parses a cursor given by a reader. "", "0" and "0-0" all mean "from the start". Only
// complete IDs are accepted: a bare millisecond value is something neither log hands out, so it
// most likely is a client sending garbage in Last-Event-ID.
func parseAfterID(s string) (entryID, error) {
	if s == "" || s == "0" {
		return entryID{}, nil
	}
	msPart, seqPart, ok := strings.Cut(s, "-")
	if !ok {
		return entryID{}, ErrInvalidID
	}
	ms, err := parseDecimal(msPart)
	if err != nil {
		return entryID{}, ErrInvalidID
	}
	seq, err := parseDecimal(seqPart)
	if err != nil {
		return entryID{}, ErrInvalidID
	}
	return entryID{ms: ms, seq: seq}, nil
}

// parseDecimal accepts plain ASCII digits only; strconv would also take "0x"/"_" forms in base 0 and
// we want the exact alphabet Redis produces.
func parseDecimal(s string) (uint64, error) {
	if s == "" || len(s) > 20 {
		return 0, ErrInvalidID
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, ErrInvalidID
		}
	}
	return strconv.ParseUint(s, 10, 64)
}
