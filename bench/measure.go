package bench

import (
	"math"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Median returns the median of vs, or NaN when vs is empty.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// CountLines counts the result lines of a tool's output or a command's,
// leaving out notices ("[...]"), "--" separators, empty lines and the
// no-match texts, so that a tool and the program it stands in for can be
// checked to have found the same number of things.
func CountLines(out string) int {
	n := 0
	for l := range strings.Lines(out) {
		l = strings.TrimSuffix(l, "\n")
		if l != "" && l != "--" && !strings.HasPrefix(l, "[") && l != "No matches found." && l != "No files found." {
			n++
		}
	}
	return n
}

// PeakRSS returns the peak resident set of an exited child process, in
// MiB, where the system reports it.
func PeakRSS(ps *os.ProcessState) (float64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, false
	}
	return float64(ru.Maxrss) / 1024, true // Linux reports KiB
}
