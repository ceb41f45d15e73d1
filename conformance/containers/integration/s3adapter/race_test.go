//go:build race

package s3adapter_test

// raceEnabled reports whether the race detector is on.
const raceEnabled = true
