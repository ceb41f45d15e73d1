package server

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CgroupMemoryShare is the part of its cgroup's memory limit a server
// takes as its soft memory limit when nothing else sets one: the rest is
// left to what the Go runtime does not count (ripgrep processes, the
// kernel's buffers of the process), so that the collector works harder
// before the kernel kills the process.
const CgroupMemoryShare = 0.9

// MemoryLimit returns the soft memory limit (runtime/debug.SetMemoryLimit)
// a long-running server should take, and where it comes from:
//   - "flag" when flag (bytes, the operator's --memory-limit) is
//     positive;
//   - "GOMEMLIMIT" when that variable is set: the runtime applied it
//     already, and limit is 0 (nothing to set);
//   - "cgroup" when the process's cgroup (v2 memory.max, or v1
//     memory.limit_in_bytes) is limited: CgroupMemoryShare of it;
//   - "" and 0: no limit.
//
// getenv reads the environment (os.Getenv).
func MemoryLimit(getenv func(string) string, flag int64) (limit int64, source string) {
	switch {
	case flag > 0:
		return flag, "flag"
	case getenv("GOMEMLIMIT") != "":
		return 0, "GOMEMLIMIT"
	}
	if l := cgroupMemoryLimit("/"); l > 0 {
		return int64(float64(l) * CgroupMemoryShare), "cgroup"
	}
	return 0, ""
}

// cgroupMemoryLimit returns the memory limit of the process's cgroup
// under root ("/" but in tests), 0 when it has none or it cannot be read.
func cgroupMemoryLimit(root string) int64 {
	self, _ := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	v1, v2 := parseCgroup(self)
	cg := filepath.Join(root, "sys/fs/cgroup")
	var candidates []string
	if v2 != "" {
		// In a container the cgroup namespace shows the container's
		// cgroup as "/", mounted at the top.
		candidates = append(candidates, filepath.Join(cg, v2, "memory.max"), filepath.Join(cg, "memory.max"))
	}
	if v1 != "" {
		candidates = append(candidates, filepath.Join(cg, "memory", v1, "memory.limit_in_bytes"), filepath.Join(cg, "memory", "memory.limit_in_bytes"))
	}
	for _, name := range candidates {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		if l, err := parseLimit(string(data)); err == nil {
			return l
		}
	}
	return 0
}

// parseCgroup returns the process's memory cgroup paths of v1 and v2
// from /proc/self/cgroup ("" for a hierarchy it is not in).
func parseCgroup(data []byte) (v1, v2 string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case strings.Contains(","+parts[1]+",", ",memory,"):
			v1 = parts[2]
		}
	}
	return v1, v2
}

// unlimitedV1 is above any limit cgroup v1 reports for a cgroup without
// one (it reports the largest page-aligned int64).
const unlimitedV1 = 1 << 62

// parseLimit reads the content of a cgroup memory limit file: 0 for
// "max" or v1's unlimited value.
func parseLimit(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, nil
	}
	l, err := strconv.ParseInt(s, 10, 64)
	if err != nil || l <= 0 {
		return 0, errors.New("not a memory limit: " + s)
	}
	if l >= unlimitedV1 {
		return 0, nil
	}
	return l, nil
}
