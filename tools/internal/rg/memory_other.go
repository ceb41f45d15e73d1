//go:build !linux

package rg

// limitMemory does nothing where the address space of another process
// cannot be bounded.
func limitMemory(pid int, bytes int64) error { return nil }
