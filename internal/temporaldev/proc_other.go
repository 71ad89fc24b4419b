//go:build !linux

package temporaldev

// Without /proc a process cannot be identified beyond its PID, so no leftover
// is ever recognised (and so never stopped): the lock wait still applies.
func procStart(int) (uint64, error) { return 0, errNoProc }

func procArgs(int) ([]string, error) { return nil, errNoProc }
