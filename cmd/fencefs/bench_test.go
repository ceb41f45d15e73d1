//go:build !fencefs_oneshot

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// BenchmarkServeHTTPReadFile measures 16 concurrent SDK clients doing
// read_file of a 4 KiB file over HTTP against one replica on local disk,
// without authentication (and so again exporting every span over
// OTLP/HTTP to a receiver in the test process), with JWT auth and a tenant
// mount, and with an audit log of every call and a quota on top of those, reporting ops/s and
// the p99 latency, and the server process's CPU time per call, which a
// loaded machine disturbs less than the wall clock. Run it alone:
//
//	go test ./cmd/fencefs/ -run '^$' -bench ServeHTTPReadFile -benchtime 4000x
func BenchmarkServeHTTPReadFile(b *testing.B) {
	const clients = 16
	content := strings.Repeat("0123456789abcde\n", 256) // 4 KiB
	for _, mode := range []string{"no-auth", "no-auth-otlp", "jwt", "jwt-audit-quota"} {
		b.Run(mode, func(b *testing.B) {
			base := b.TempDir()
			dir := filepath.Join(base, "tenants", "t1")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
			var h *httpServe
			var token, path string
			if mode != "no-auth" {
				iss := tenanttest.NewIssuer(b)
				token = iss.Sign(b, tenanttest.Claims{Subject: "t1"})
				args := []string{"serve", "--http", "127.0.0.1:0", "--auth", "jwt", "--oidc-issuer", iss.URL,
					"--oidc-audience", iss.Audience, "--tenant-mount", "ws=local:" + filepath.Join(base, "tenants", "{tenant}")}
				if mode == "jwt-audit-quota" {
					// Every read is audited, and counted against a quota
					// of calls and stored files.
					args = append(args, "--audit", filepath.Join(base, "audit.jsonl"), "--audit-reads", "--quota-files", "1000", "--max-concurrent", "64")
				}
				h = startServe(b, args...)
				path = "/ws/f.txt"
			} else {
				args := []string{"serve", "--http", "127.0.0.1:0", "--root", dir}
				if mode == "no-auth-otlp" {
					// Every call's spans (the call's, the read's) go to a
					// receiver in this process that decodes them.
					args = append(args, "--otlp-endpoint", newOTLPReceiver(b).url)
				}
				h = startServe(b, args...)
				path = "f.txt"
			}
			var sessions []*mcp.ClientSession
			for range clients {
				cs, err := connectAs(b, h.url, token, "")
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				sessions = append(sessions, cs)
			}
			args := &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": path}}
			lat := make([][]time.Duration, clients)
			cpu0 := processCPU(b, h.cmd.Process.Pid)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for i, cs := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := i; n < b.N; n += clients {
						t0 := time.Now()
						res, err := cs.CallTool(b.Context(), args)
						if err != nil || res.IsError {
							b.Errorf("read_file: %v %v", err, res)
							return
						}
						lat[i] = append(lat[i], time.Since(t0))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			cpu := processCPU(b, h.cmd.Process.Pid) - cpu0
			all := slices.Concat(lat...)
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(len(all))/elapsed.Seconds(), "ops/s")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-us")
				b.ReportMetric(float64(cpu.Microseconds())/float64(len(all)), "server-cpu-us/op")
			}
		})
	}
}

// processCPU returns the user and system CPU time the process pid has
// used, from /proc (in clock ticks of 10 ms).
func processCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
