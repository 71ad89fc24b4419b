//go:build !linux

package app

// dropIdleCodePages is Linux-only (it reads /proc/self/smaps).
func dropIdleCodePages() int64 { return 0 }

// mapCodeInSmallPages is Linux-only.
func mapCodeInSmallPages() error { return nil }
