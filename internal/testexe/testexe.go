// Package testexe writes executable scripts for tests without the
// "text file busy" race.
//
// A test that writes a script with os.WriteFile holds a descriptor open for
// writing; a child forked at that moment by a parallel test inherits it
// until its exec, and executing the script in that window fails with
// ETXTBSY. Write has a child process write the file instead, so this
// process never holds the script open for writing.
package testexe

import (
	"os/exec"
	"strings"
	"testing"
)

// Write makes path an executable (mode 0755) holding content, written by
// a child process, and fails the test if it cannot.
func Write(t testing.TB, path, content string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `umask 022 && cat > "$1" && chmod 755 "$1"`, "sh", path)
	cmd.Stdin = strings.NewReader(content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing the script %s: %v: %s", path, err, out)
	}
}
