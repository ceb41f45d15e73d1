package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Metric names the benchmarks report (with testing.B.ReportMetric) and the
// table reads.
const (
	// MetricOurs and MetricRef are the median times of one fencefs call
	// and one call of the program it is compared with, in nanoseconds.
	MetricOurs = "fencefs-ns/op"
	MetricRef  = "ref-ns/op"
	// MetricRatio is the median over rounds of fencefs's time divided by
	// the reference's time in the same round.
	MetricRatio = "ratio"
	// MetricRSS is a child process's peak resident set, in MiB.
	MetricRSS = "peak-rss-MiB"
	// MetricLists and MetricRequests count the S3 list requests and all
	// requests of one call.
	MetricLists    = "list-requests"
	MetricRequests = "requests"
	// MetricCPU is a child process's CPU time (user and system), in
	// milliseconds.
	MetricCPU = "cpu-ms"
)

// GoalKind says how a row's goal is checked.
type GoalKind int

const (
	// RatioAtMost: MetricRatio must be at most Goal.Limit.
	RatioAtMost GoalKind = iota
	// RSSUnder: MetricRSS must be below Goal.Limit.
	RSSUnder
	// ListsAtMost: MetricLists must be at most Goal.Limit.
	ListsAtMost
	// CPUUnder: MetricCPU must be below Goal.Limit.
	CPUUnder
)

// Goal is what a row must reach.
type Goal struct {
	Kind  GoalKind
	Limit float64
}

// String renders the goal for the table.
func (g Goal) String() string {
	switch g.Kind {
	case RSSUnder:
		return "peak RSS < " + strconv.FormatFloat(g.Limit, 'f', -1, 64) + " MiB"
	case ListsAtMost:
		return strconv.FormatFloat(g.Limit, 'f', -1, 64) + " list requests"
	case CPUUnder:
		return "CPU < " + strconv.FormatFloat(g.Limit, 'f', -1, 64) + " ms"
	}
	return "<= " + strconv.FormatFloat(g.Limit, 'f', -1, 64) + "x"
}

// Row is one line of the results table.
type Row struct {
	// Benchmark is the Go benchmark the row reads, without the
	// "Benchmark" prefix ("SearchLiteral", "Mounted/find_files").
	Benchmark string
	// Measure says what is measured.
	Measure string
	// Compared says what fencefs is compared with, "-" for nothing.
	Compared string
	Goal     Goal
}

// Rows returns the rows of the table, in order.
func Rows() []Row {
	return []Row{
		{"SearchLiteral", "search_files literal, whole tree (20k files)", "rg -n " + LiteralPattern, Goal{RatioAtMost, 1.5}},
		{"SearchRegex", "search_files regex with a literal part", "rg -n '" + RegexPattern + "'", Goal{RatioAtMost, 2}},
		{"Grep", "grep tool (ripgrep-backed)", "rg, same flags, plain output", Goal{RatioAtMost, 1.1}},
		{"GrepIgnored", "grep beside an ignored 20k-file node_modules", "rg, same flags, own ignores", Goal{RatioAtMost, 1.5}},
		{"FindFiles", "find_files **/*.go, 100k entries", "find -name '*.go'", Goal{RatioAtMost, 1.0}},
		{"ReadFile", "read_file of a 4 KiB file, in process", "os.ReadFile + format", Goal{RatioAtMost, 1.5}},
		{"ReadWindowRSS", "read_file limit 50 of a 1 GiB file", "-", Goal{RSSUnder, 16}},
		{"Mounted/search_files", "search_files through mounted", "same local backend direct", Goal{RatioAtMost, 1.05}},
		{"Mounted/find_files", "find_files through mounted", "same local backend direct", Goal{RatioAtMost, 1.05}},
		{"Mounted/read_file", "read_file through mounted", "same local backend direct", Goal{RatioAtMost, 1.05}},
		{"S3FindFiles", "find_files over 10,000 S3 keys", "-", Goal{ListsAtMost, 10}},
		{"S3WriteRSS", "1 GiB streamed write to S3", "-", Goal{RSSUnder, 64}},
		{"Startup/version", "fencefs version, whole process", "-", Goal{CPUUnder, 3}},
		{"Startup/call", "fencefs call read_file 4 KiB, whole process", "-", Goal{CPUUnder, 3}},
		{"Startup/oneshot-version", "fencefs version, one-shot build", "-", Goal{CPUUnder, 3}},
		{"Startup/oneshot-call", "fencefs call read_file 4 KiB, one-shot", "-", Goal{CPUUnder, 3}},
	}
}

// Results holds what a benchmark run printed: for each benchmark (named
// as in Row.Benchmark), every value of every metric, one per run
// (-count), and the reason it was skipped, if it was.
type Results struct {
	Metrics map[string]map[string][]float64
	Skipped map[string]string
	Failed  map[string]bool
}

var (
	benchLine  = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	statusLine = regexp.MustCompile(`^\s*--- (SKIP|FAIL): Benchmark(\S+?)(?:-\d+)?(?:\s|$)`)
)

// ParseResults reads the output of `go test -bench` (plain, not -json).
func ParseResults(r io.Reader) (*Results, error) {
	res := &Results{Metrics: map[string]map[string][]float64{}, Skipped: map[string]string{}, Failed: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	skipping := ""
	for sc.Scan() {
		line := sc.Text()
		if skipping != "" {
			if msg, ok := skipMessage(line); ok {
				if res.Skipped[skipping] == "" {
					res.Skipped[skipping] = msg
				}
				continue
			}
			skipping = ""
		}
		if m := statusLine.FindStringSubmatch(line); m != nil {
			if m[1] == "SKIP" {
				skipping = m[2]
				res.Skipped[skipping] = res.Skipped[skipping] // present, reason to follow
			} else {
				res.Failed[m[2]] = true
			}
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		fields := strings.Fields(m[2])
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			if res.Metrics[m[1]] == nil {
				res.Metrics[m[1]] = map[string][]float64{}
			}
			res.Metrics[m[1]][fields[i+1]] = append(res.Metrics[m[1]][fields[i+1]], v)
		}
	}
	return res, sc.Err()
}

// skipMessage returns the text of an indented "file.go:12: message" line
// that follows a SKIP line.
func skipMessage(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if t == "" || !strings.HasPrefix(line, " ") {
		return "", false
	}
	if _, msg, ok := strings.Cut(t, ": "); ok && strings.Contains(t[:strings.Index(t, ": ")], ".go:") {
		return msg, true
	}
	return t, true
}

// value returns the median of a row's metric over the runs.
func (r *Results) value(bench, metric string) (float64, bool) {
	v := Median(r.Metrics[bench][metric])
	return v, !math.IsNaN(v)
}

// TableLine is one evaluated row.
type TableLine struct {
	Row
	Ours, Ref, Ratio string
	// Met is "yes", "NO", or why the row has no result.
	Met string
}

// Evaluate turns results into table lines, one per row, and reports
// whether every row that ran met its goal.
func Evaluate(res *Results) ([]TableLine, bool) {
	all := true
	var out []TableLine
	for _, row := range Rows() {
		l := TableLine{Row: row, Ours: "-", Ref: "-", Ratio: "-"}
		met, ran := evaluate(res, &l)
		switch {
		case !ran && res.Failed[row.Benchmark]:
			l.Met = "FAILED (see the log)"
			all = false
		case !ran:
			if reason, ok := res.Skipped[row.Benchmark]; ok {
				l.Met = "SKIPPED: " + reason
			} else {
				l.Met = "not run"
			}
		case met:
			l.Met = "yes"
		default:
			l.Met = "NO"
			all = false
		}
		out = append(out, l)
	}
	return out, all
}

func evaluate(res *Results, l *TableLine) (met, ran bool) {
	b := l.Benchmark
	switch l.Goal.Kind {
	case RSSUnder:
		rss, ok := res.value(b, MetricRSS)
		if !ok {
			return false, false
		}
		l.Ours = fmt.Sprintf("peak RSS %.1f MiB", rss)
		return rss < l.Goal.Limit, true
	case ListsAtMost:
		lists, ok := res.value(b, MetricLists)
		if !ok {
			return false, false
		}
		all, _ := res.value(b, MetricRequests)
		l.Ours = fmt.Sprintf("%g list requests (%g requests in all)", lists, all)
		return lists <= l.Goal.Limit, true
	case CPUUnder:
		cpu, ok := res.value(b, MetricCPU)
		if !ok {
			return false, false
		}
		l.Ours = fmt.Sprintf("CPU %.2f ms", cpu)
		return cpu < l.Goal.Limit, true
	}
	ratio, ok := res.value(b, MetricRatio)
	if !ok {
		return false, false
	}
	ours, _ := res.value(b, MetricOurs)
	ref, _ := res.value(b, MetricRef)
	l.Ours = formatNs(ours)
	l.Ref = l.Compared + ": " + formatNs(ref)
	l.Ratio = fmt.Sprintf("%.2fx", ratio)
	// Two decimals are shown, so a goal is met by what the table shows.
	return math.Round(ratio*100)/100 <= l.Goal.Limit, true
}

// formatNs renders a duration in nanoseconds with three significant
// digits.
func formatNs(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "?"
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

// WriteTable writes the results as one table: measure | fencefs |
// compared with | ratio | goal | met?. It reports whether every goal that
// was measured was met.
func WriteTable(w io.Writer, res *Results) (bool, error) {
	lines, all := Evaluate(res)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, " measure\t fencefs\t compared with\t ratio\t goal\t met?")
	fmt.Fprintln(tw, " -------\t -------\t -------------\t -----\t ----\t ----")
	for _, l := range lines {
		compared := l.Ref
		if compared == "-" && l.Compared != "-" {
			compared = l.Compared
		}
		fmt.Fprintf(tw, " %s\t %s\t %s\t %s\t %s\t %s\n", l.Measure, l.Ours, compared, l.Ratio, l.Goal, l.Met)
	}
	return all, tw.Flush()
}
