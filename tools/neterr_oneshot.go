//go:build fencefs_oneshot

package tools

// netFailure finds no failure of the network in the one-shot build of the
// fencefs command (go install -tags fencefs_oneshot), which opens local
// storage only: without package net that binary needs no C resolver, so
// it is linked statically with cgo on (0.8 ms of its start). Every other
// build words network failures as such (neterr.go).
func netFailure(error) (timeout, ok bool) { return false, false }
