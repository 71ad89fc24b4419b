package models_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/models"
)

// panelZoned is how GNS3's web UI decides that a time has a zone (formatTime in its session
// list); a time it does not match gets "Z" appended.
var panelZoned = regexp.MustCompile(`[Z+-]\d{2}:?\d{2}$`)

func TestClientTimeIsReadableByGNS3sPanelAndExact(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	for _, in := range []time.Time{
		time.Date(2026, 3, 6, 16, 31, 36, 547762000, time.UTC),
		time.Date(2026, 3, 7, 0, 31, 36, 0, shanghai), // another zone, no fraction
		time.Date(2026, 3, 6, 16, 31, 36, 500000000, time.UTC),
	} {
		s := models.ClientTime(in)
		if !panelZoned.MatchString(s) || s[len(s)-1] == 'Z' {
			t.Errorf("%s: the panel would append Z to %q", in, s)
		}
		if s[len(s)-6:] != "+00:00" {
			t.Errorf("%q is not written in UTC", s)
		}
		back, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !back.Equal(in.Truncate(time.Microsecond)) {
			t.Errorf("%q reads back as %v (%v), not %v", s, back, err, in)
		}
	}
	if got := models.ClientTime(time.Date(2026, 3, 6, 16, 31, 36, 547762000, time.UTC)); got != "2026-03-06T16:31:36.547762+00:00" {
		t.Errorf("got %q", got)
	}
}
