//go:build !fencefs_oneshot

package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/internal/testserver"
)

func TestCallSFTPMount(t *testing.T) {
	t.Parallel()
	login := testserver.SFTPConfig{User: "agent", Password: "s3cret"}
	addr, hostKey := testserver.StartSFTP(t, login)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hello.txt"), "hi\n")
	pin := base64.StdEncoding.EncodeToString(hostKey.Marshal())
	spec := "sftp://agent@" + addr + dir + "?password_env=FENCEFS_TEST_SFTP_PASSWORD&host_key=" + pin
	env := []string{"FENCEFS_TEST_SFTP_PASSWORD=s3cret"}

	got := runFencefs(t, dir, "", env, "call", "--mount", "remote="+spec, "write_file", `{"path":"/remote/new.txt","content":"over sftp\n"}`)
	if got.code != 0 || !strings.HasPrefix(got.stdout, "Wrote 10 chars (1 line) to /remote/new.txt.") {
		t.Fatalf("write over sftp: %+v", got)
	}
	if s := readFile(t, filepath.Join(dir, "new.txt")); s != "over sftp\n" {
		t.Fatalf("new.txt holds %q", s)
	}
	got = runFencefs(t, dir, "", env, "call", "--mount", "remote="+spec+"&ro=1", "edit_file", `{"path":"/remote/hello.txt","old_text":"hi","new_text":"bye"}`)
	if got.code != 2 || !strings.Contains(got.stdout, "read-only") {
		t.Fatalf("edit on a read-only sftp mount: %+v", got)
	}
	if s := readFile(t, filepath.Join(dir, "hello.txt")); s != "hi\n" {
		t.Fatalf("hello.txt holds %q", s)
	}

	// A host key other than the pinned one is refused at start-up.
	otherAddr, _ := testserver.StartSFTP(t, login)
	wrong := strings.Replace(spec, addr, otherAddr, 1)
	got = runFencefs(t, dir, "", env, "call", "--mount", "remote="+wrong, "list_directory", `{"path":"/remote"}`)
	if got.code != 1 || !strings.HasPrefix(got.stderr, `fencefs: mount "remote": `) || got.stdout != "" {
		t.Fatalf("wrong host key: %+v", got)
	}
	t.Logf("wrong host key: %s", got.stderr)
	got = runFencefs(t, dir, "", []string{"FENCEFS_TEST_SFTP_PASSWORD=wrong"}, "call", "--mount", "remote="+spec, "list_directory")
	if got.code != 1 || !strings.HasPrefix(got.stderr, `fencefs: mount "remote": `) {
		t.Fatalf("wrong password: %+v", got)
	}
	t.Logf("wrong password: %s", got.stderr)
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err != nil {
		t.Fatal(err)
	}
}
