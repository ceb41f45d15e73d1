package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/overlay"
	"github.com/fencefs/fencefs/quota"
	"github.com/fencefs/fencefs/server"
	"github.com/fencefs/fencefs/tenant"
)

// sessionStore returns the template of a checkpoint store per session
// below dir.
func sessionStore(t *testing.T, dir string) tenant.Template {
	t.Helper()
	st, err := tenant.ParseTemplate("local:" + filepath.Join(dir, tenant.Placeholder, tenant.SessionPlaceholder))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSessionCheckpointsAndQuota: with an upper layer per session, each
// session has a journal of its own (store local:CKPT/{tenant}/{session}):
// it lists its own changes, and a restore undoes them and leaves the
// other session's; a storage quota is the tenant's across its sessions
// (a second session cannot store what the first already holds, nor
// while an ended session's storage is kept, until it is removed), and
// another tenant's is its own.
func TestSessionCheckpointsAndQuota(t *testing.T) {
	ckpt := t.TempDir()
	clk := &clock{now: time.Now()}
	f, err := newSessionsFixture(t, func(c *server.Config) {
		c.Checkpoints = &server.Checkpoints{Store: sessionStore(t, ckpt), List: true, Restore: true}
		c.QuotaTenants = map[string]quota.Limits{"t1": {MaxBytes: 8000}}
		server.WithSessionClock(c, clk.Now)
	})
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := f.connect(t, "t1"), f.connect(t, "t1")
	big := strings.Repeat("x", 4000)
	write := func(cs *mcp.ClientSession, p, content string) {
		t.Helper()
		if out, isErr := callText(t, cs, "write_file", map[string]any{"path": p, "content": content}); isErr {
			t.Fatalf("session %s writing %s: %s", cs.ID(), p, out)
		}
	}
	write(s1, "/ws/a.txt", "one\n")
	write(s2, "/ws/b.txt", "two\n")
	write(s2, "/ws/big.txt", big)
	// The quota is t1's, whatever the session: s2's large file leaves s1
	// no room for another.
	if out, isErr := callText(t, s1, "write_file", map[string]any{"path": "/ws/big2.txt", "content": big}); !isErr || !strings.Contains(out, "quota") {
		t.Errorf("s1 writing past t1's quota: %v %q", isErr, out)
	}
	if _, err := os.Stat(filepath.Join(f.up, "t1", s1.ID(), "big2.txt")); !os.IsNotExist(err) {
		t.Errorf("a write refused by the quota was made: %v", err)
	}
	// Another tenant's quota is its own (unlimited here).
	write(f.connect(t, "t2"), "/ws/big.txt", big+big)

	// Each session lists its own checkpoints.
	l1, _ := callText(t, s1, "list_checkpoints", nil)
	l2, _ := callText(t, s2, "list_checkpoints", nil)
	if !strings.Contains(l1, "write /ws/a.txt") || strings.Contains(l1, "b.txt") || strings.Contains(l1, "big") {
		t.Errorf("s1's checkpoints:\n%s", l1)
	}
	if !strings.Contains(l2, "write /ws/b.txt") || !strings.Contains(l2, "write /ws/big.txt") || strings.Contains(l2, "a.txt") {
		t.Errorf("s2's checkpoints:\n%s", l2)
	}
	for _, cs := range []string{s1.ID(), s2.ID()} {
		if fi, err := os.Stat(filepath.Join(ckpt, "t1", cs)); err != nil || !fi.IsDir() {
			t.Errorf("session %s's store: %v", cs, err)
		}
	}
	// s1 restores to its start: its upper layer is back to the base,
	// s2's keeps its changes.
	if out, isErr := callText(t, s1, "restore_checkpoint", map[string]any{"checkpoint": 0}); isErr {
		t.Fatalf("s1 restore: %s", out)
	}
	if text, _ := callText(t, s1, "read_file", map[string]any{"path": "/ws/a.txt"}); !strings.Contains(text, "base") {
		t.Errorf("s1 reads %q after its restore, want the base", text)
	}
	if changes, err := f.overlay(t, "t1", s1.ID()).Changes(context.Background()); err != nil || len(changes) != 0 {
		t.Errorf("s1's upper after its restore: %+v, %v; want no change", changes, err)
	}
	if text, _ := callText(t, s2, "read_file", map[string]any{"path": "/ws/b.txt"}); !strings.Contains(text, "two") {
		t.Errorf("s2 reads %q after s1's restore", text)
	}

	// s2 ends: its storage, kept for review, still counts against t1;
	// once removed after the retention, it no longer does.
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if out, isErr := callText(t, s1, "write_file", map[string]any{"path": "/ws/big2.txt", "content": big}); !isErr || !strings.Contains(out, "quota") {
		t.Errorf("s1 writing while s2's storage is kept: %v %q", isErr, out)
	}
	clk.add(server.DefaultSessionRetention + time.Minute)
	if n, err := server.CollectSessions(t.Context(), f.srv); err != nil || n != 1 {
		t.Fatalf("collection: %d removed, %v; want s2's", n, err)
	}
	if out, isErr := callText(t, s1, "write_file", map[string]any{"path": "/ws/big2.txt", "content": big}); isErr {
		t.Errorf("s1 writing once s2's storage was removed: %q", out)
	}
}

// TestSessionStoreDisjoint: a checkpoint store per session is proven out
// of every session's storage: in a session's own upper layer, or where
// another session's upper lies, it is refused; beside the uppers it is
// served.
func TestSessionStoreDisjoint(t *testing.T) {
	dir := t.TempDir()
	up := filepath.Join(dir, "up")
	for _, c := range []struct {
		store, want string
	}{
		// In the session's own upper layer.
		{filepath.Join(up, tenant.Placeholder, tenant.SessionPlaceholder, "ckpt"), "the tools must not reach the store"},
		// In the upper layer of session "ckpt" of the tenant.
		{filepath.Join(up, tenant.Placeholder, "ckpt", tenant.SessionPlaceholder), "reach the same storage"},
		// Around every session of the tenant.
		{filepath.Join(up, tenant.Placeholder), "must name the session"},
		{filepath.Join(dir, "ckpt", tenant.Placeholder, tenant.SessionPlaceholder), ""},
	} {
		_, err := newSessionsFixtureIn(t, dir, func(cfg *server.Config) {
			st, err := tenant.ParseTemplate("local:" + c.store)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Checkpoints = &server.Checkpoints{Store: st}
		})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("store %s: %v", c.store, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("store %s: %v, want %q", c.store, err, c.want)
		}
	}
	// A store per session with no mount per session is refused.
	if _, err := ckptStoreOnly(t); err == nil || !strings.Contains(err.Error(), "no tenant mount does") {
		t.Errorf("a store per session without {session} mounts: %v", err)
	}
}

// ckptStoreOnly builds a tenant server whose mounts are per tenant and
// whose store is per session.
func ckptStoreOnly(t *testing.T) (*server.Server, error) {
	dir := t.TempDir()
	ws, _ := tenant.ParseTemplate("local:" + filepath.Join(dir, "ws", tenant.Placeholder))
	return server.New(t.Context(), server.Config{
		TenantMounts: []server.TenantMount{{Name: "ws", Template: ws}},
		Identity:     headerIdentity,
		Checkpoints:  &server.Checkpoints{Store: sessionStore(t, filepath.Join(dir, "ckpt"))},
	})
}

// clock is a test's clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestSessionRetention: an ended session's upper layer and checkpoint
// store are kept for review (fencefs overlay changes works on them) for
// the retention, then removed; a live session's storage, another
// tenant's, and a directory that is not a session's are never touched;
// with SessionCollectLeftovers, a session an earlier process left is
// removed once its retention passed since its last change.
func TestSessionRetention(t *testing.T) {
	ckpt := t.TempDir()
	clk := &clock{now: time.Now()}
	// What an earlier process left: an old session of t1, and a
	// directory of the operator's.
	dir := t.TempDir()
	up := filepath.Join(dir, "up")
	leftover := filepath.Join(up, "t1", strings.Repeat("A", 26))
	notSession := filepath.Join(up, "t1", "notes")
	for _, d := range []string{leftover, notSession} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := clk.Now().Add(-3 * time.Hour)
		for _, p := range []string{filepath.Join(d, "f.txt"), d} {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Links out of the template's location: one named like a session,
	// one inside the leftover. Neither is followed.
	outside := filepath.Join(dir, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(up, "t1", strings.Repeat("B", 26))
	if err := os.MkdirAll(filepath.Join(leftover, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{linked, filepath.Join(leftover, "sub", "out")} {
		if err := os.Symlink(outside, l); err != nil {
			t.Fatal(err)
		}
	}
	old := clk.Now().Add(-3 * time.Hour)
	backdate(t, old, filepath.Join(leftover, "sub", "out"), filepath.Join(leftover, "sub"), leftover)
	f, err := newSessionsFixtureIn(t, dir, func(c *server.Config) {
		c.Checkpoints = &server.Checkpoints{Store: sessionStore(t, ckpt), List: true}
		c.SessionRetention = time.Hour
		c.SessionCollectLeftovers = true
		server.WithSessionClock(c, clk.Now)
	})
	if err != nil {
		t.Fatal(err)
	}
	ended, live, other := f.connect(t, "t1"), f.connect(t, "t1"), f.connect(t, "t2")
	for _, cs := range []*mcp.ClientSession{ended, live, other} {
		if out, isErr := callText(t, cs, "write_file", map[string]any{"path": "/ws/a.txt", "content": cs.ID() + "\n"}); isErr {
			t.Fatalf("write: %s", out)
		}
	}
	exists := func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	}
	// At start-up: the earlier process's session is due (its last change
	// 3h ago), nothing else is.
	if n, err := server.CollectSessions(t.Context(), f.srv); err != nil || n != 1 {
		t.Fatalf("first collection: %d removed, %v; want the leftover", n, err)
	}
	if exists(leftover) || !exists(filepath.Join(notSession, "f.txt")) {
		t.Errorf("after the first collection: leftover there %v, operator's directory there %v", exists(leftover), exists(notSession))
	}
	if _, err := os.Lstat(linked); err != nil || !exists(filepath.Join(outside, "keep.txt")) {
		t.Errorf("a link out of the location: link %v, its target's file there %v", err, exists(filepath.Join(outside, "keep.txt")))
	}
	// The session ends: its storage is kept for review.
	if err := ended.Close(); err != nil {
		t.Fatal(err)
	}
	clk.add(59 * time.Minute)
	if n, err := server.CollectSessions(t.Context(), f.srv); err != nil || n != 0 {
		t.Fatalf("collection within the retention: %d removed, %v", n, err)
	}
	if got := f.metric(t, "fencefs_sessions_kept"); got != "1" {
		t.Errorf("sessions kept: %s, want the ended one", got)
	}
	endedUp := filepath.Join(f.up, "t1", ended.ID())
	if changes, err := f.overlay(t, "t1", ended.ID()).Changes(context.Background()); err != nil || len(changes) != 1 || changes[0].Kind != overlay.Modified {
		t.Errorf("the ended session's changes within the retention: %+v, %v", changes, err)
	}
	if !exists(filepath.Join(ckpt, "t1", ended.ID())) {
		t.Errorf("the ended session's checkpoint store went within the retention")
	}
	// Past the retention: removed, upper layer and store; the rest stays.
	clk.add(2 * time.Minute)
	if n, err := server.CollectSessions(t.Context(), f.srv); err != nil || n != 1 {
		t.Fatalf("collection past the retention: %d removed, %v; want the ended session", n, err)
	}
	if got := f.metric(t, "fencefs_sessions_kept"); got != "0" {
		t.Errorf("sessions kept after the removal: %s", got)
	}
	if exists(endedUp) || exists(filepath.Join(ckpt, "t1", ended.ID())) {
		t.Errorf("the ended session's storage is still there: upper %v, store %v", exists(endedUp), exists(filepath.Join(ckpt, "t1", ended.ID())))
	}
	for _, p := range []string{
		filepath.Join(f.up, "t1", live.ID(), "a.txt"), filepath.Join(ckpt, "t1", live.ID()),
		filepath.Join(f.up, "t2", other.ID(), "a.txt"), filepath.Join(ckpt, "t2", other.ID()),
		filepath.Join(notSession, "f.txt"),
	} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
	// A session's storage replaced by a link to another tenant's, once
	// the session ended: the link is not followed, nor tried again.
	victim := f.connect(t, "t1")
	if out, isErr := callText(t, victim, "write_file", map[string]any{"path": "/ws/a.txt", "content": "victim\n"}); isErr {
		t.Fatalf("write: %s", out)
	}
	if err := victim.Close(); err != nil {
		t.Fatal(err)
	}
	victimUp := filepath.Join(f.up, "t1", victim.ID())
	if err := os.RemoveAll(victimUp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "t2", other.ID()), victimUp); err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Hour)
	if n, err := server.CollectSessions(t.Context(), f.srv); n != 0 || err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Errorf("collection of a session whose storage is a link: %d removed, %v", n, err)
	}
	if !exists(filepath.Join(f.up, "t2", other.ID(), "a.txt")) {
		t.Fatalf("the collection followed a link into t2's storage")
	}
	if n, err := server.CollectSessions(t.Context(), f.srv); n != 0 || err != nil {
		t.Errorf("the link's session tried again: %d, %v", n, err)
	}
	// Much later, a live session's storage is still never touched.
	clk.add(48 * time.Hour)
	if n, err := server.CollectSessions(t.Context(), f.srv); err != nil || n != 0 {
		t.Errorf("collection with only live sessions: %d removed, %v", n, err)
	}
	if text, _ := callText(t, live, "read_file", map[string]any{"path": "/ws/a.txt"}); !strings.Contains(text, live.ID()) {
		t.Errorf("the live session reads %q", text)
	}
}

// BenchmarkSessionCollect: what removing an earlier process's sessions
// costs at start-up (SessionCollectLeftovers), per session of 5 small
// files in an upper layer on local disk (listing, last changes read
// twice, removal).
func BenchmarkSessionCollect(b *testing.B) {
	const sessions, files = 100, 5
	clk := &clock{now: time.Now()}
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		for i := range sessions {
			d := filepath.Join(dir, "up", "t1", fmt.Sprintf("%026d", i))
			d = filepath.Join(filepath.Dir(d), strings.Map(func(r rune) rune { return 'A' + (r - '0') }, filepath.Base(d)))
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			for j := range files {
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.txt", j)), []byte("x"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		f, err := newSessionsFixtureIn(b, dir, func(c *server.Config) {
			c.SessionRetention = server.RemoveSessionsAtOnce
			c.SessionCollectLeftovers = true
			server.WithSessionClock(c, func() time.Time { return clk.Now().Add(time.Hour) })
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := server.CollectSessions(context.Background(), f.srv)
		if err != nil || n != sessions {
			b.Fatalf("removed %d, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sessions), "ns/session")
}

// backdate sets the modification time of each path (a link's own) to at.
func backdate(t *testing.T, at time.Time, paths ...string) {
	t.Helper()
	ts := []unix.Timespec{unix.NsecToTimespec(at.UnixNano()), unix.NsecToTimespec(at.UnixNano())}
	for _, p := range paths {
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSessionReplicasShareStorage: two stateful replicas over the same
// locations (sticky routing, or the old and new process of a rolling
// restart), with --session-retention 0: the second's start-up and
// collections, however late, never remove the storage of the first's
// live session; the first removes it once it saw it end.
func TestSessionReplicasShareStorage(t *testing.T) {
	dir := t.TempDir()
	clkA, clkB := &clock{now: time.Now()}, &clock{now: time.Now()}
	a, err := newSessionsFixtureIn(t, dir, func(c *server.Config) {
		c.SessionRetention = server.RemoveSessionsAtOnce // serve's --session-retention 0
		server.WithSessionClock(c, clkA.Now)
	})
	if err != nil {
		t.Fatal(err)
	}
	cs := a.connect(t, "t1")
	if out, isErr := callText(t, cs, "write_file", map[string]any{"path": "/ws/a.txt", "content": "live\n"}); isErr {
		t.Fatalf("write: %s", out)
	}
	up := filepath.Join(a.up, "t1", cs.ID(), "a.txt")
	b, err := newSessionsFixtureIn(t, dir, func(c *server.Config) {
		c.SessionRetention = server.RemoveSessionsAtOnce
		server.WithSessionClock(c, clkB.Now)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, later := range []time.Duration{0, time.Hour, 48 * time.Hour} {
		clkB.add(later)
		if n, err := server.CollectSessions(t.Context(), b.srv); err != nil || n != 0 {
			t.Fatalf("the second replica's collection %v later: %d removed, %v", later, n, err)
		}
		if _, err := os.Stat(up); err != nil {
			t.Fatalf("the first replica's live session's storage, %v into the second's life: %v", later, err)
		}
	}
	if got := b.metric(t, "fencefs_sessions_kept"); got != "0" {
		t.Errorf("the second replica keeps %s sessions for removal, want none of the first's", got)
	}
	if text, _ := callText(t, cs, "read_file", map[string]any{"path": "/ws/a.txt"}); !strings.Contains(text, "live") {
		t.Errorf("the live session reads %q", text)
	}
	// The first replica saw it end: it removes it.
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	clkA.add(time.Second)
	if n, err := server.CollectSessions(t.Context(), a.srv); err != nil || n != 1 {
		t.Fatalf("the first replica's collection after its session ended: %d removed, %v", n, err)
	}
	if _, err := os.Stat(filepath.Dir(up)); !os.IsNotExist(err) {
		t.Errorf("the ended session's storage: %v, want removed", err)
	}
}

// TestSessionLeftoverLastChange: with SessionCollectLeftovers, a
// leftover's last change is the newest in its whole tree (a nested file
// changed while its directory and direct entries stay old), it is
// removed only once the retention and the session timeout passed since,
// and a change after it was found (read again before the removal) puts
// it off.
func TestSessionLeftoverLastChange(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Now()}
	sd := filepath.Join(dir, "up", "t1", strings.Repeat("C", 26))
	deep := filepath.Join(sd, "src", "pkg")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(sd, "top.txt"), filepath.Join(deep, "a.go")} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	backdate(t, clk.Now().Add(-5*time.Minute), filepath.Join(deep, "a.go"), deep)
	backdate(t, clk.Now().Add(-3*time.Hour), filepath.Join(sd, "src"), filepath.Join(sd, "top.txt"), sd)
	f, err := newSessionsFixtureIn(t, dir, func(c *server.Config) {
		c.SessionRetention = time.Hour
		c.SessionCollectLeftovers = true
		server.WithSessionClock(c, clk.Now)
	})
	if err != nil {
		t.Fatal(err)
	}
	collect := func(want int) {
		t.Helper()
		if n, err := server.CollectSessions(t.Context(), f.srv); err != nil || n != want {
			t.Fatalf("collection: %d removed, %v; want %d", n, err, want)
		}
	}
	// Changed 5 minutes ago, down in src/pkg: kept.
	collect(0)
	clk.add(50 * time.Minute)
	collect(0)
	// A change after it was found, 55 minutes in: read again when it falls
	// due (an hour after the first), it is put off.
	backdate(t, clk.Now().Add(-5*time.Minute), filepath.Join(deep, "a.go"))
	clk.add(10 * time.Minute)
	collect(0)
	if _, err := os.Stat(filepath.Join(deep, "a.go")); err != nil {
		t.Fatalf("the leftover went within an hour of its last change: %v", err)
	}
	clk.add(time.Hour)
	collect(1)
	if _, err := os.Stat(sd); !os.IsNotExist(err) {
		t.Errorf("the leftover past an hour since its last change: %v, want removed", err)
	}
}

// TestSessionLeftoverSessionTimeout: with SessionCollectLeftovers and
// --session-retention 0, a leftover changed just now (what another
// process's live session looks like) is removed only once the session
// timeout passed since.
func TestSessionLeftoverSessionTimeout(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Now()}
	sd := filepath.Join(dir, "up", "t1", strings.Repeat("D", 26))
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	backdate(t, clk.Now(), filepath.Join(sd, "a.txt"), sd)
	f, err := newSessionsFixtureIn(t, dir, func(c *server.Config) {
		c.SessionRetention = server.RemoveSessionsAtOnce
		c.SessionCollectLeftovers = true
		c.HTTP.SessionTimeout = 20 * time.Minute
		server.WithSessionClock(c, clk.Now)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		after time.Duration
		want  int
	}{{0, 0}, {19 * time.Minute, 0}, {2 * time.Minute, 1}} {
		clk.add(c.after)
		if n, err := server.CollectSessions(t.Context(), f.srv); err != nil || n != c.want {
			t.Fatalf("collection %v later: %d removed, %v; want %d", c.after, n, err, c.want)
		}
	}
}
