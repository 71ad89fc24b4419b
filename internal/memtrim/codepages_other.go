//go:build !linux

package memtrim

// DropIdleCodePages is Linux-only (it reads /proc/self/smaps).
func DropIdleCodePages() int64 { return 0 }

// DeclineHugePages is Linux-only.
func DeclineHugePages() error { return nil }
