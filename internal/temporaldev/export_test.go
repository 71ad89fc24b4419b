package temporaldev

import "time"

// SetLeftoverGrace shortens the SIGTERM grace of a leftover dev server for a test.
func SetLeftoverGrace(d time.Duration) (restore func()) {
	old := leftoverGrace
	leftoverGrace = d
	return func() { leftoverGrace = old }
}

// SetBusyAttempts bounds the busy-database retries for a test.
func SetBusyAttempts(n int) (restore func()) {
	old := busyAttempts
	busyAttempts = n
	return func() { busyAttempts = old }
}

// FD is the locked descriptor, for a test that hands it to another process.
func (l *Lock) FD() uintptr { return l.f.Fd() }

// SetDiedAttempts bounds the starts of a dev server that dies while starting, for a test.
func SetDiedAttempts(n int) (restore func()) {
	old := diedAttempts
	diedAttempts = n
	return func() { diedAttempts = old }
}
