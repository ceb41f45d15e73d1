//go:build !fencefs_oneshot

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// startSessionServe starts `fencefs serve --stateful --http` with extra
// flags, every tool, JWT auth by the issuer it returns, and in a fresh
// directory base: ws, an overlay of base/base (holding a.txt, "base") with
// an upper layer per session in base/up/{tenant}/{session}, and a
// checkpoint store per session in base/ckpt/{tenant}/{session}.
func startSessionServe(t *testing.T, extra ...string) (*tenanttest.Issuer, *httpServe, string) {
	t.Helper()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	writeFile(t, filepath.Join(base, "base", "a.txt"), "base\n")
	up, ckpt := filepath.Join(base, "up"), filepath.Join(base, "ckpt")
	h := startServe(t, append([]string{"serve", "--http", "127.0.0.1:0", "--stateful", "--tools", allTools(),
		"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience,
		"--tenant-mount", "ws=overlay:local:" + filepath.Join(base, "base") + ":ro+local:" + filepath.Join(up, "{tenant}", "{session}"),
		"--checkpoints", "local:" + filepath.Join(ckpt, "{tenant}", "{session}")}, extra...)...)
	return iss, h, base
}

// TestServeSessionCheckpoints drives `fencefs serve --stateful` with an
// upper layer per session, a checkpoint store per session, a storage
// quota and --session-retention 0: each session journals its own
// changes, the quota holds across a tenant's sessions, and a session's
// storage (upper layer and store) is removed as it ends while another's
// stays. The quota counts each session store's segment as its files
// hold it, zeros made ahead included (4 KiB at first).
func TestServeSessionCheckpoints(t *testing.T) {
	t.Parallel()
	iss, h, base := startSessionServe(t, "--checkpoint-tools", "restore", "--quota-bytes", "12000", "--session-retention", "0")
	up, ckpt := filepath.Join(base, "up"), filepath.Join(base, "ckpt")
	ctx := t.Context()
	token := iss.Sign(t, tenanttest.Claims{Subject: "t1"})
	s1, err := connectAs(t, h.url, token, "")
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, h.stderr.String())
	}
	s2, err := connectAs(t, h.url, token, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	callOK(t, ctx, s1, "write_file", map[string]any{"path": "/ws/a.txt", "content": "one\n"})
	callOK(t, ctx, s2, "write_file", map[string]any{"path": "/ws/big.txt", "content": strings.Repeat("x", 5000)})
	if out := callOK(t, ctx, s1, "list_checkpoints", nil); !strings.Contains(out, "write /ws/a.txt") || strings.Contains(out, "big") {
		t.Errorf("s1's checkpoints:\n%s", out)
	}
	if out := callRefused(t, ctx, s1, "write_file", map[string]any{"path": "/ws/big.txt", "content": strings.Repeat("y", 5000)}); !strings.Contains(out, "quota") {
		t.Errorf("s1 past t1's quota: %q", out)
	}
	s1Up, s1Store := filepath.Join(up, "t1", s1.ID()), filepath.Join(ckpt, "t1", s1.ID())
	for _, d := range []string{s1Up, s1Store} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("session storage: %v", err)
		}
	}
	// The session ends: with --session-retention 0 its storage goes.
	s1.Close()
	h.waitLog(t, "removed an ended session's storage")
	for _, d := range []string{s1Up, s1Store} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s after the session ended: %v", d, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(up, "t1", s2.ID(), "big.txt")); err != nil || len(data) != 5000 {
		t.Errorf("the live session's upper layer: %d bytes, %v", len(data), err)
	}
	if out := callOK(t, ctx, s2, "list_checkpoints", nil); !strings.Contains(out, "write /ws/big.txt") {
		t.Errorf("s2's checkpoints after s1 ended:\n%s", out)
	}
}

// TestServeSessionReview: with the default --session-retention, an
// ended session's upper layer and journal stay for review: fencefs
// overlay diff shows its change against the base, fencefs checkpoints
// lists it, and fencefs overlay commit lands it.
func TestServeSessionReview(t *testing.T) {
	t.Parallel()
	iss, h, base := startSessionServe(t)
	up, ckpt := filepath.Join(base, "up"), filepath.Join(base, "ckpt")
	cs, err := connectAs(t, h.url, iss.Sign(t, tenanttest.Claims{Subject: "t1"}), "")
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, h.stderr.String())
	}
	callOK(t, t.Context(), cs, "read_file", map[string]any{"path": "/ws/a.txt"})
	callOK(t, t.Context(), cs, "edit_file", map[string]any{"path": "/ws/a.txt", "old_text": "base", "new_text": "reviewed"})
	sid := cs.ID()
	cs.Close()
	spec := "overlay:local:" + filepath.Join(base, "base") + "+local:" + filepath.Join(up, "t1", sid)
	if got := runFencefs(t, base, "", nil, "overlay", "diff", spec); got.code != 0 || !strings.Contains(got.stdout, "-base") || !strings.Contains(got.stdout, "+reviewed") {
		t.Errorf("fencefs overlay diff of the ended session: %+v", got)
	}
	if got := runFencefs(t, base, "", nil, "checkpoints", "--mount", "ws="+spec, "local:"+filepath.Join(ckpt, "t1", sid), "list"); got.code != 0 || !strings.Contains(got.stdout, "edit ws/a.txt") {
		t.Errorf("fencefs checkpoints list of the ended session: %+v", got)
	}
	if got := runFencefs(t, base, "", nil, "overlay", "commit", spec); got.code != 0 || !strings.Contains(got.stdout, "landed") {
		t.Errorf("fencefs overlay commit of the ended session: %+v", got)
	}
	if data, err := os.ReadFile(filepath.Join(base, "base", "a.txt")); err != nil || string(data) != "reviewed\n" {
		t.Errorf("the base after the commit: %q, %v", data, err)
	}
}
