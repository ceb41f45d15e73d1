//go:build !race

package security

// slowdown scales the answer deadlines of the exhaustion tests; see
// race_test.go.
const slowdown = 1
