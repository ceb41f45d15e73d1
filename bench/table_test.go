package bench

import (
	"math"
	"strings"
	"testing"
)

const sampleRun = `goos: linux
BenchmarkSearchLiteral-2   	       1	4695341798 ns/op	 320379943 fencefs-ns/op	         1.359 ratio	 235358950 ref-ns/op
BenchmarkSearchLiteral-2   	       1	4695341798 ns/op	 330000000 fencefs-ns/op	         1.600 ratio	 235358950 ref-ns/op
BenchmarkSearchLiteral-2   	       1	4695341798 ns/op	 310000000 fencefs-ns/op	         1.200 ratio	 235358950 ref-ns/op
BenchmarkFindFiles-2       	       1	6328996018 ns/op	 374484705 fencefs-ns/op	         2.669 ratio	 138461898 ref-ns/op
BenchmarkReadWindowRSS-2   	       1	1021219149 ns/op	         4.977 peak-rss-MiB
BenchmarkMounted/find_files-2           	       1	9944435548 ns/op	 317286799 fencefs-ns/op	         1.017 ratio	 295379720 ref-ns/op
--- SKIP: BenchmarkS3FindFiles
    s3_test.go:92: SKIPPED, NO CONTAINERS: docker is not running
--- FAIL: BenchmarkGrep
    bench_test.go:12: result counts differ
PASS
`

func TestParseResults(t *testing.T) {
	res, err := ParseResults(strings.NewReader(sampleRun))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Metrics["SearchLiteral"][MetricRatio]; len(got) != 3 {
		t.Errorf("SearchLiteral ratios = %v, want three runs", got)
	}
	if v, ok := res.value("SearchLiteral", MetricRatio); !ok || v != 1.359 {
		t.Errorf("median ratio = %v, want 1.359", v)
	}
	if v, ok := res.value("Mounted/find_files", MetricRatio); !ok || v != 1.017 {
		t.Errorf("sub-benchmark ratio = %v, %v", v, ok)
	}
	if msg := res.Skipped["S3FindFiles"]; msg != "SKIPPED, NO CONTAINERS: docker is not running" {
		t.Errorf("skip reason = %q", msg)
	}
	if !res.Failed["Grep"] {
		t.Error("the failed benchmark is not marked")
	}
}

func TestEvaluate(t *testing.T) {
	res, err := ParseResults(strings.NewReader(sampleRun))
	if err != nil {
		t.Fatal(err)
	}
	lines, all := Evaluate(res)
	if all {
		t.Error("all goals met, but find_files is at 2.67x and grep failed")
	}
	met := map[string]string{}
	for _, l := range lines {
		met[l.Benchmark] = l.Met
	}
	want := map[string]string{
		"SearchLiteral":      "yes",
		"FindFiles":          "NO",
		"ReadWindowRSS":      "yes",
		"Mounted/find_files": "yes",
		"Grep":               "FAILED (see the log)",
		"S3FindFiles":        "SKIPPED: SKIPPED, NO CONTAINERS: docker is not running",
		"S3WriteRSS":         "not run",
	}
	for b, w := range want {
		if met[b] != w {
			t.Errorf("%s: met = %q, want %q", b, met[b], w)
		}
	}
}

func TestWriteTable(t *testing.T) {
	res, err := ParseResults(strings.NewReader(sampleRun))
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if all, err := WriteTable(&sb, res); err != nil || all {
		t.Fatalf("WriteTable = %v, %v", all, err)
	}
	out := sb.String()
	for _, want := range []string{
		" measure ", " fencefs ", " compared with ", " ratio ", " goal ", " met?",
		"| 320 ms ", "| rg -n parseManifest: 235 ms ", "| 1.36x ", "| <= 1.5x ", "| peak RSS 5.0 MiB ", "| peak RSS < 16 MiB ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != len(Rows())+2 {
		t.Errorf("table has %d lines, want %d:\n%s", n, len(Rows())+2, out)
	}
}

func TestGoalBoundary(t *testing.T) {
	for _, tt := range []struct {
		ratio string
		met   string
	}{{"1.054", "yes"}, {"1.049", "yes"}, {"1.056", "NO"}} {
		res, err := ParseResults(strings.NewReader("BenchmarkMounted/read_file-2 1 1 ns/op 1 fencefs-ns/op " + tt.ratio + " ratio 1 ref-ns/op\n"))
		if err != nil {
			t.Fatal(err)
		}
		lines, _ := Evaluate(res)
		for _, l := range lines {
			if l.Benchmark == "Mounted/read_file" && l.Met != tt.met {
				t.Errorf("ratio %s against 1.05: met = %q, want %q (the table shows two decimals)", tt.ratio, l.Met, tt.met)
			}
		}
	}
}

func TestMedianAndCounts(t *testing.T) {
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is a number")
	}
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("Median = %v", m)
	}
	if m := Median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("Median = %v", m)
	}
	out := "a.go:1:x\n--\nb.go-2-y\n[3 hidden entries omitted; name a hidden path explicitly to include it]\n\n"
	if n := CountLines(out); n != 2 {
		t.Errorf("CountLines = %d, want 2", n)
	}
	if n := CountLines("No matches found."); n != 0 {
		t.Errorf("CountLines(no matches) = %d", n)
	}
	if rss, ok := ParsePeakRSS("noise\npeak-rss-kib: 5120\n"); !ok || rss != 5 {
		t.Errorf("ParsePeakRSS = %v, %v", rss, ok)
	}
	if _, ok := ParsePeakRSS("nothing"); ok {
		t.Error("ParsePeakRSS found a number in nothing")
	}
}

// FuzzParseResults checks that any benchmark output parses without panic
// and evaluates to a table of one line per row.
func FuzzParseResults(f *testing.F) {
	f.Add(sampleRun)
	f.Add("--- SKIP: BenchmarkX\n    x.go:1: why\nBenchmarkX-2 1 NaN ratio\n")
	f.Fuzz(func(t *testing.T, out string) {
		res, err := ParseResults(strings.NewReader(out))
		if err != nil {
			return
		}
		if lines, _ := Evaluate(res); len(lines) != len(Rows()) {
			t.Fatalf("%d lines for %d rows", len(lines), len(Rows()))
		}
		var sb strings.Builder
		if _, err := WriteTable(&sb, res); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStartupRows(t *testing.T) {
	for _, tt := range []struct {
		cpu, met, shown string
	}{{"2.5", "yes", "CPU 2.50 ms"}, {"8.9", "NO", "CPU 8.90 ms"}} {
		res, err := ParseResults(strings.NewReader("BenchmarkStartup/version-2 1 1 ns/op " + tt.cpu + " cpu-ms\n"))
		if err != nil {
			t.Fatal(err)
		}
		lines, _ := Evaluate(res)
		found := false
		for _, l := range lines {
			if l.Benchmark == "Startup/version" {
				found = true
				if l.Met != tt.met || l.Ours != tt.shown {
					t.Errorf("cpu %s ms against 3: %q, met %q; want %q, %q", tt.cpu, l.Ours, l.Met, tt.shown, tt.met)
				}
			}
		}
		if !found {
			t.Fatal("no Startup/version row")
		}
	}
}
