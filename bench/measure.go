package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
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

// rssPrefix starts the line in which a child process reports its peak
// resident set.
const rssPrefix = "peak-rss-kib: "

// ReportPeakRSS writes the calling process's peak resident set (VmHWM) to
// w, for the parent to read with [ParsePeakRSS]. A process measures
// itself because the rusage of a child started with vfork-style exec (as
// Go starts children) counts the parent's memory too.
func ReportPeakRSS(w io.Writer) error {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				return fmt.Errorf("VmHWM: %w", err)
			}
			_, err = fmt.Fprintf(w, "%s%d\n", rssPrefix, kib)
			return err
		}
	}
	return errors.New("no VmHWM in /proc/self/status")
}

// ParsePeakRSS returns the peak resident set, in MiB, that a child
// reported with [ReportPeakRSS] in its output.
func ParsePeakRSS(out string) (float64, bool) {
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), rssPrefix); ok {
			kib, err := strconv.Atoi(v)
			return float64(kib) / 1024, err == nil
		}
	}
	return 0, false
}
