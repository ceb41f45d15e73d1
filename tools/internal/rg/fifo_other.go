//go:build !linux

package rg

// watchFIFOs does nothing where a process's waits cannot be seen; a FIFO
// swapped in under rg then holds it until its deadline.
func watchFIFOs(pid int, held func()) (stop func()) { return func() {} }
