package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestChangeRequests(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "a\nb\n")
		var got []ChangeRequest
		rec := &recorder{}
		s := newSet(t, fx.b, Options{OnEvent: rec.on, OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
			got = append(got, *r)
			return nil
		}})
		ok(t, s, "write_file", "path", "new.txt", "content", "x\ny\n")
		ok(t, s, "write_file", "path", "f.txt", "content", "a\nb")
		ok(t, s, "edit_file", "path", "f.txt", "old_text", "b", "new_text", "c\n")
		want := []ChangeRequest{
			{Path: "new.txt", Operation: "write", Diff: "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y", Sizes: []SizeChange{{"new.txt", -1, 4, "", false}}},
			{Path: "f.txt", Operation: "write", Diff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file", Sizes: []SizeChange{{"f.txt", 4, 3, hashOf("a\nb\n"), false}}},
			{Path: "f.txt", Operation: "edit", Diff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c", Sizes: []SizeChange{{"f.txt", 3, 4, hashOf("a\nb"), false}}},
		}
		if len(got) != len(want) {
			t.Fatalf("requests %+v", got)
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("request %d:\n%#v\nwant\n%#v", i, got[i], want[i])
			}
		}
		// Refused calls announce nothing.
		retry(t, s, "write_file", "path", ".env", "content", "x")
		retry(t, s, "write_file", "path", "nope/x", "content", "x")
		retry(t, s, "write_file", "path", "f.txt", "content", "x", "expected_hash", "000000000000")
		retry(t, s, "edit_file", "path", "f.txt", "old_text", "zzz", "new_text", "x")
		if len(got) != 3 {
			t.Errorf("refused calls were announced: %+v", got[3:])
		}
	})
}

func TestChangeRequestDiffOfUnshowableContent(t *testing.T) {
	m := newMemFS()
	m.put("b.bin", "\x00\x01")
	var got ChangeRequest
	s := newSet(t, m, Options{OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
		got = *r
		return nil
	}})
	ok(t, s, "write_file", "path", "b.bin", "content", "text")
	if !reflect.DeepEqual(got, ChangeRequest{Path: "b.bin", Operation: "write", Diff: "--- a/b.bin\n+++ b/b.bin", Truncated: true, Sizes: []SizeChange{{"b.bin", 2, 4, hashOf("\x00\x01"), false}}}) {
		t.Errorf("binary request %#v", got)
	}
	m.put("big.txt", string(make([]byte, 0))+stringsRepeat("x\n", 200000))
	ok(t, s, "write_file", "path", "big.txt", "content", "small")
	if !reflect.DeepEqual(got, ChangeRequest{Path: "big.txt", Operation: "write", Diff: "--- a/big.txt\n+++ b/big.txt", Truncated: true, Sizes: []SizeChange{{"big.txt", 400000, 5, hashOf(stringsRepeat("x\n", 200000)), false}}}) {
		t.Errorf("large request %#v", got)
	}
}

func stringsRepeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

func TestChangeRequestCancel(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "a\n")
		reason := "migrations need a human"
		rec := &recorder{}
		s := newSet(t, fx.b, Options{OnEvent: rec.on, OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
			r.Cancel(reason)
			return nil
		}})
		wantEqual(t, ok(t, s, "write_file", "path", "f.txt", "content", "b"), "['f.txt' was not written: migrations need a human]")
		wantEqual(t, ok(t, s, "edit_file", "path", "./f.txt", "old_text", "a", "new_text", "b"), "['./f.txt' was not edited: migrations need a human]")
		wantEqual(t, ok(t, s, "create_directory", "path", "d"), "['d' was not created: migrations need a human]")
		reason = ""
		wantEqual(t, ok(t, s, "write_file", "path", "f.txt", "content", "b"), "['f.txt' was not written: cancelled by a listener]")
		wantEqual(t, fx.mustGet(t, "f.txt"), "a\n")
		if _, ok := fx.get(t, "d"); ok {
			t.Error("cancelled directory was created")
		}
		if len(rec.events) != 0 {
			t.Errorf("cancelled changes emitted %s", rec.kinds())
		}
	})
}

func TestChangeListenerErrorIsFatal(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "a\n")
		boom := errors.New("listener exploded")
		s := newSet(t, fx.b, Options{OnChangeRequest: func(context.Context, *ChangeRequest) error { return boom }})
		_, err := s.Call(context.Background(), "write_file", args(t, "path", "f.txt", "content", "b"))
		if err == nil || IsRetry(err) || !errors.Is(err, boom) {
			t.Fatalf("error %v: want a fatal error wrapping the listener's", err)
		}
		// Even a listener returning a RetryError aborts the call.
		s = newSet(t, fx.b, Options{OnChangeRequest: func(context.Context, *ChangeRequest) error { return &RetryError{Message: "x"} }})
		if _, err := s.Call(context.Background(), "create_directory", args(t, "path", "d")); err == nil || IsRetry(err) {
			t.Fatalf("error %v: want fatal", err)
		}
		wantEqual(t, fx.mustGet(t, "f.txt"), "a\n")
	})
}

func TestChangeDuringApprovalIsAConflict(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "shown\n")
		meanwhile := "changed meanwhile\n"
		s := newSet(t, fx.b, Options{OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
			fx.put(t, "f.txt", meanwhile)
			return nil
		}})
		wantEqual(t, retry(t, s, "write_file", "path", "f.txt", "content", "mine\n"),
			"Conflict: file 'f.txt' has changed (expected hash:"+h12("shown\n")+", got hash:"+h12(meanwhile)+"). Re-read the file and retry.")
		before := meanwhile
		meanwhile = "changed again\n"
		wantEqual(t, retry(t, s, "edit_file", "path", "f.txt", "old_text", "changed", "new_text", "x"),
			"Conflict: file 'f.txt' has changed (expected hash:"+h12(before)+", got hash:"+h12(meanwhile)+"). Re-read the file and retry.")
		wantEqual(t, fx.mustGet(t, "f.txt"), meanwhile)
	})
}

func TestChangeDuringApprovalDeletedIsNotRecreated(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "g.txt", "a\n")
	s := newSet(t, fx.b, Options{OnChangeRequest: func(context.Context, *ChangeRequest) error {
		return os.Remove(filepath.Join(fx.dir, "g.txt"))
	}})
	wantEqual(t, retry(t, s, "edit_file", "path", "g.txt", "old_text", "a", "new_text", "b"),
		"Conflict: file 'g.txt' has changed (expected hash:"+h12("a\n")+", got hash:none). Re-read the file and retry.")
	if _, ok := fx.get(t, "g.txt"); ok {
		t.Error("a file deleted during approval was recreated")
	}
}

func TestPathReplacedDuringApproval(t *testing.T) {
	fx := localFixture(t)
	fx.put(t, "f.txt", "a\n")
	fx.put(t, "other.txt", "o\n")
	s := newSet(t, fx.b, Options{OnChangeRequest: func(context.Context, *ChangeRequest) error {
		p := filepath.Join(fx.dir, "f.txt")
		os.Remove(p)
		return os.Symlink("other.txt", p)
	}})
	wantEqual(t, retry(t, s, "write_file", "path", "f.txt", "content", "new\n"),
		"Conflict: path 'f.txt' changed while the change was being approved. Check it and retry.")
	wantEqual(t, fx.mustGet(t, "other.txt"), "o\n")
}
