package security

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/tools"
)

// meteredSet returns a tool set over w whose changes reserve their
// announced growth (ChangeRequest.Sizes, as quota.Resize counts it) from
// m for tenant "t", as a server does, and a function that commits or
// cancels what a call reserved once it returned err.
func meteredSet(t *testing.T, w *world, m *quota.Manager) (*tools.Set, func(err error)) {
	var mu sync.Mutex
	var held []*quota.Reservation
	s := w.set(t, tools.Options{OnChangeRequest: func(ctx context.Context, req *tools.ChangeRequest) error {
		var d quota.Usage
		for _, c := range req.Sizes {
			d = d.Add(quota.Resize(c.Before, c.After))
		}
		r, err := m.Reserve(ctx, "t", d)
		if err != nil {
			req.Cancel(err.Error())
			return nil
		}
		mu.Lock()
		held = append(held, r)
		mu.Unlock()
		return nil
	}})
	return s, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range held {
			if err == nil {
				r.Commit()
			} else {
				r.Cancel()
			}
		}
		held = nil
	}
}

// TestQuotaMetersDirectories (class 6): directories are storage growth
// and count toward a tenant's entry limit (MaxFiles), in the scan and in
// every reservation. Under a limit of five entries more than the
// workspace holds, a loop of create_directory stops at five (thousands
// went through before), a deep create_directory or an apply_patch whose
// new file needs more new parent directories than are left is refused
// whole with nothing created, and empty directories made behind the
// server's back are counted by the next scan. On every backend.
func TestQuotaMetersDirectories(t *testing.T) {
	forWorlds(t, allKinds, baseLayout, func(t *testing.T, w *world) {
		ctx := t.Context()
		scan := quota.UsageFunc(func(ctx context.Context, _ string) (quota.Usage, error) {
			return quota.ScanFS(ctx, backend.FS(ctx, w.b))
		})
		base, err := scan(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		m, err := quota.New(quota.Options{Default: quota.Limits{MaxFiles: base.Files + 5}, Usage: scan})
		if err != nil {
			t.Fatal(err)
		}
		s, end := meteredSet(t, w, m)
		// do calls a tool; a change the quota cancelled is told to the
		// model as the result text, which do returns as an error.
		do := func(tool string, args map[string]any) (string, error) {
			out, err := call(t, s, tool, args)
			if err == nil && strings.Contains(out, "quota:") {
				err = errors.New(out)
			}
			end(err)
			return out, err
		}
		refused := func(what string, err error) {
			t.Helper()
			if err == nil || !strings.Contains(err.Error(), quota.LimitFiles) {
				t.Fatalf("%s: %v, want a refusal naming %s", what, err, quota.LimitFiles)
			}
		}
		// Deep paths first, while five entries are left: six or seven new
		// directories do not fit, and none is made.
		before := w.snap(t)
		_, err = do("create_directory", map[string]any{"path": "deep/a/b/c/d/e/f"})
		refused("create_directory of 7 new directories", err)
		_, err = do("apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: p/q/r/s/t/new.txt\n+x\n*** End Patch\n"})
		refused("apply_patch of a file in 5 new directories", err)
		if d := before.diff(w.snap(t)); len(d) > 0 {
			t.Fatalf("refused changes changed %v", d)
		}
		made := 0
		for i := range 1000 {
			_, err := do("create_directory", map[string]any{"path": fmt.Sprintf("d%04d", i)})
			if err != nil {
				refused(fmt.Sprintf("directory %d", i), err)
				break
			}
			made++
		}
		if made != 5 {
			t.Fatalf("%d directories made under a limit of 5 more entries", made)
		}
		// Free them, then make empty directories behind the Manager's back:
		// its next scan counts them.
		for i := range made {
			if _, err := do("delete_file", map[string]any{"path": fmt.Sprintf("d%04d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			dir := fmt.Sprintf("outside-made/%02d", i)
			if w.rooted {
				dir = "ws/" + dir
			}
			if err := backend.MkdirAll(ctx, w.b, dir); err != nil {
				t.Fatal(err)
			}
		}
		m.Rescan("t")
		_, err = do("write_file", map[string]any{"path": "one.txt", "content": "x"})
		refused("a file after 21 directories made outside", err)
		if _, err := call(t, s, "file_info", map[string]any{"path": "one.txt"}); !errors.Is(err, tools.KindNotFound) {
			t.Fatalf("one.txt after the refusal: %v", err)
		}
	})
}
