package tools

import (
	"context"
	"testing"
)

func TestRequireRead(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "f.txt", "one\n")
		s := newSet(t, fx.b, Options{RequireRead: true})
		wantEqual(t, retry(t, s, "write_file", "path", "f.txt", "content", "x"), "'f.txt' has not been read yet; read it before changing it.")
		wantEqual(t, retry(t, s, "edit_file", "path", "f.txt", "old_text", "one", "new_text", "x"), "'f.txt' has not been read yet; read it before changing it.")
		// A new file needs no read.
		ok(t, s, "write_file", "path", "new.txt", "content", "n\n")
		// A partial read counts.
		ok(t, s, "read_file", "path", "f.txt", "limit", 1)
		ok(t, s, "edit_file", "path", "f.txt", "old_text", "one", "new_text", "two")
		// The Set's own writes keep it current.
		ok(t, s, "write_file", "path", "f.txt", "content", "three\n")
		ok(t, s, "edit_file", "path", "new.txt", "old_text", "n", "new_text", "m")
		// A change by someone else needs a new read.
		fx.put(t, "f.txt", "theirs\n")
		wantEqual(t, retry(t, s, "write_file", "path", "f.txt", "content", "x"), "'f.txt' changed since it was read; read it again.")
		wantEqual(t, retry(t, s, "edit_file", "path", "./f.txt", "old_text", "theirs", "new_text", "x"), "'./f.txt' changed since it was read; read it again.")
		ok(t, s, "read_file", "path", "f.txt")
		ok(t, s, "write_file", "path", "f.txt", "content", "x")
		// file_info is not a read of the content.
		fx.put(t, "g.txt", "g\n")
		ok(t, s, "file_info", "path", "g.txt")
		retry(t, s, "write_file", "path", "g.txt", "content", "x")
		// Without the option nothing is required.
		s = newSet(t, fx.b, Options{})
		ok(t, s, "write_file", "path", "g.txt", "content", "x")
	})
}

func TestRequireReadBinary(t *testing.T) {
	m := newMemFS()
	m.put("b.bin", "\x00\x01")
	s := newSet(t, m, Options{RequireRead: true})
	ok(t, s, "read_file", "path", "b.bin")
	ok(t, s, "write_file", "path", "b.bin", "content", "text")
}

func TestPathLocksDoNotGrow(t *testing.T) {
	var l pathLocks
	ctx := context.Background()
	for _, name := range []string{"a", "b", "a", "c"} {
		unlock, err := l.lock(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		unlock()
	}
	if l.size() != 0 {
		t.Errorf("%d entries left", l.size())
	}
	unlock, _ := l.lock(ctx, "a")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.lock(cancelled, "a"); err == nil {
		t.Error("a held lock was acquired")
	}
	if l.size() != 1 {
		t.Errorf("%d entries, want 1 while held", l.size())
	}
	unlock()
	if l.size() != 0 {
		t.Errorf("%d entries left after a cancelled wait", l.size())
	}
}
