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
// counts, which is why the row has a goal of its own.
//
//	go test ./bench -run '^$' -bench Startup -benchtime 1x
func BenchmarkStartup(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "fencefs")
	build := exec.Command("go", "build", "-o", bin, "github.com/fencefs/fencefs/cmd/fencefs")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("building fencefs: %v", err)
	}
	dir := b.TempDir()
	name := smallFile(b, dir)
	for _, c := range []struct {
		bench string
		args  []string
	}{
		{"version", []string{"version"}},
		{"call", []string{"call", "--root", dir, "read_file", `{"path":"` + name + `"}`}},
	} {
		b.Run(c.bench, func(b *testing.B) {
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
