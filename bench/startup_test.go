package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkStartup measures what starting the fencefs command costs: the
// whole process's CPU time (user and system, from its rusage) of
// `fencefs version` and of `fencefs call read_file` on a 4 KiB file,
// median over rounds. Package initialisation of every linked library
// counts, which is why the row has a goal of its own. The oneshot- rows
// are the one-shot build's (-tags fencefs_oneshot).
//
//	go test ./bench -run '^$' -bench Startup -benchtime 1x
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	name := smallFile(b, dir)
	// The default build, and the one-shot build (go install -tags
	// fencefs_oneshot: version, help, completion and call on local
	// storage only).
	for _, build := range []struct{ name, tags string }{{"", ""}, {"oneshot-", "fencefs_oneshot"}} {
		bin := filepath.Join(b.TempDir(), "fencefs")
		cmd := exec.Command("go", "build", "-tags", build.tags, "-o", bin, "github.com/fencefs/fencefs/cmd/fencefs")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("building fencefs (tags %q): %v", build.tags, err)
		}
		for _, c := range []struct {
			bench string
			args  []string
		}{
			{"version", []string{"version"}},
			{"call", []string{"call", "--root", dir, "read_file", `{"path":"` + name + `"}`}},
		} {
			b.Run(build.name+c.bench, func(b *testing.B) {
				for b.Loop() {
					var cpu []float64
					for range rounds(41) {
						cmd := exec.Command(bin, c.args...)
						if out, err := cmd.CombinedOutput(); err != nil {
							b.Fatalf("fencefs %v: %v\n%s", c.args, err, out)
						}
						ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
						ns := syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)
						cpu = append(cpu, float64(ns)/1e6)
					}
					b.ReportMetric(Median(cpu), MetricCPU)
				}
			})
		}
	}
}
