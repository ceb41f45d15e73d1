//go:build race

package security

// slowdown scales the answer deadlines of the exhaustion tests: the race
// detector makes the tools' Go code several times slower, and those
// deadlines bound work, not speed.
const slowdown = 10
