package server

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCgroupMemoryLimit reads the limit of cgroup v2 and v1 layouts
// under a fake root: a limited cgroup gives its bytes, "max", v1's
// unlimited value, a missing or unreadable file give 0.
func TestCgroupMemoryLimit(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"v2 in a container", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "2147483648\n",
		}, 2147483648},
		{"v2 nested", map[string]string{
			"proc/self/cgroup":                       "0::/kubepods/pod1\n",
			"sys/fs/cgroup/kubepods/pod1/memory.max": "1073741824\n",
		}, 1073741824},
		{"v2 unlimited", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, 0},
		{"v1", map[string]string{
			"proc/self/cgroup":                           "4:memory:/docker/abc\n1:cpu:/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n",
		}, 536870912},
		{"v1 unlimited, hybrid", map[string]string{
			"proc/self/cgroup":                           "4:memory:/x\n0::/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, 0},
		{"garbage", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "lots\n",
		}, 0},
		{"no cgroup", map[string]string{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, data := range c.files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := cgroupMemoryLimit(root); got != c.want {
				t.Errorf("limit %d, want %d", got, c.want)
			}
		})
	}
}

// TestMemoryLimit: the operator's flag decides, then GOMEMLIMIT (which
// the runtime applied already).
func TestMemoryLimit(t *testing.T) {
	env := map[string]string{"GOMEMLIMIT": "1GiB"}
	getenv := func(k string) string { return env[k] }
	if l, src := MemoryLimit(getenv, 500<<20); l != 500<<20 || src != "flag" {
		t.Errorf("flag: %d from %q, want 500 MiB from flag", l, src)
	}
	if l, src := MemoryLimit(getenv, 0); l != 0 || src != "GOMEMLIMIT" {
		t.Errorf("GOMEMLIMIT: %d from %q, want 0 from GOMEMLIMIT", l, src)
	}
}

// FuzzCgroupFiles: whatever /proc/self/cgroup and a limit file hold, the
// parsers neither panic nor give a negative limit, and a path taken is
// absolute, as the kernel writes it.
func FuzzCgroupFiles(f *testing.F) {
	f.Add([]byte("0::/\n"), "max\n")
	f.Add([]byte("4:memory:/docker/abc\n0::/x\n"), "9223372036854771712")
	f.Add([]byte("12:cpu,memory:/a\n"), "-1")
	f.Fuzz(func(t *testing.T, cgroup []byte, limit string) {
		v1, v2 := parseCgroup(cgroup)
		for _, p := range []string{v1, v2} {
			if p != "" && p[0] != '/' {
				t.Errorf("path %q is not absolute", p)
			}
		}
		if l, err := parseLimit(limit); l < 0 || err != nil && l != 0 {
			t.Errorf("parseLimit(%q) = %d, %v", limit, l, err)
		}
	})
}
