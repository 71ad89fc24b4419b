package devices

import (
	"context"
	"io"
	"net"
	"time"
)

// Options tune a console session. The zero value suits GNS3 consoles.
type Options struct {
	// DialTimeout bounds the TCP connect (default 5 s).
	DialTimeout time.Duration
	// SettleQuiet is how long the console must stay silent after connecting
	// (and after telnet negotiation) before the first write (default 50 ms).
	// A write glued to our negotiation replies is dropped by vpcs.
	SettleQuiet time.Duration
	// SettleMax caps the settle phase on a console that keeps talking (default 2 s).
	SettleMax time.Duration
	// WakeTimeout is the wait for a prompt after the first wake-up Enter; it
	// doubles on every retry (default 1 s).
	WakeTimeout time.Duration
	// WakeAttempts is how many wake-up Enters are sent (default 3).
	WakeAttempts int
	// BusyTimeout: a console that has sent nothing at all (not even telnet
	// negotiation) this long after connecting is reported busy (default 2 s).
	BusyTimeout time.Duration
	// NegotiationGap is the silence kept between a telnet negotiation reply and the next write
	// (default 30 ms: vpcs discards a whole read that starts with 0xFF, and would lose a command
	// glued to a reply). A console replayed from a script, which loses nothing, needs none.
	NegotiationGap time.Duration
	// PromptSettle is the silence that confirms a prompt that differs from
	// the previous one, so a prompt-like line inside output is not taken as
	// the end of a command (default 30 ms).
	PromptSettle time.Duration
	// DefaultTimeout replaces the platform's timeout for commands that have
	// no specific rule; TimeoutScale multiplies every derived timeout.
	DefaultTimeout time.Duration
	TimeoutScale   float64
	// ResyncTimeout bounds the recovery after a timeout (default 5 s).
	ResyncTimeout time.Duration
	// MaxOutput bounds what one command may print, in bytes (default DefaultMaxOutput): a
	// command that prints more (a "cat" of a large file, "yes") is stopped with the platform's
	// interrupt, and its result keeps the first MaxOutput bytes.
	MaxOutput int
	// Username and Password answer a console login; EnableSecret answers
	// the password prompt of "enable".
	Username, Password, EnableSecret string
	// Answers reply to interim prompts for every command of the session.
	Answers []Answer
	// NoEnable keeps a Cisco-like console in user mode after connecting.
	NoEnable bool
	// SkipSetup skips the platform's setup commands (paging off and such).
	SkipSetup bool
	// Policy, when set, refuses forbidden commands before they are sent.
	Policy *Policy
	// Consoles, when set, is the process-wide bound on open consoles that Use waits on.
	Consoles *ConsoleLimit
	// DisableQuickAck turns off TCP_QUICKACK.
	DisableQuickAck bool
	// Transcript receives every byte exchanged, for debugging.
	Transcript io.Writer
	// Dial replaces the TCP dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DefaultMaxOutput is the bound on one command's output: far above any lab device's running
// configuration, far below what a runaway command prints in its timeout.
const DefaultMaxOutput = 1 << 20

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.DialTimeout, 5*time.Second)
	def(&o.SettleQuiet, 50*time.Millisecond)
	def(&o.SettleMax, 2*time.Second)
	def(&o.WakeTimeout, time.Second)
	def(&o.BusyTimeout, 2*time.Second)
	def(&o.PromptSettle, 30*time.Millisecond)
	def(&o.NegotiationGap, iacGap)
	def(&o.ResyncTimeout, 5*time.Second)
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.WakeAttempts <= 0 {
		o.WakeAttempts = 3
	}
	if o.TimeoutScale <= 0 {
		o.TimeoutScale = 1
	}
	return o
}
