package audit_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/fencefs/fencefs/audit"
)

func ExampleLogger() {
	var buf bytes.Buffer // or audit.OpenFile("/var/log/fencefs/audit.jsonl", nil)
	l := audit.New(&buf, audit.Genesis)
	err := l.Log(audit.Record{
		Time:      time.Date(2026, 12, 1, 21, 30, 0, 0, time.UTC),
		RequestID: "r-17", Tenant: "t1", Subject: "alice",
		Tool: "write_file", Paths: []string{"/ws/notes.md"}, Outcome: audit.OutcomeOK,
		NewHash: "sha256:2cf24dba", Bytes: 5, Duration: 1830 * time.Microsecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(buf.String())
	// Output:
	// {"time":"2026-12-01T21:30:00Z","request_id":"r-17","tenant":"t1","subject":"alice","tool":"write_file","paths":["/ws/notes.md"],"outcome":"ok","new_hash":"sha256:2cf24dba","bytes":5,"duration_ns":1830000,"prev":"0000000000000000000000000000000000000000000000000000000000000000"}
}

func ExampleVerify() {
	var buf bytes.Buffer
	l := audit.New(&buf, audit.Genesis)
	for _, tool := range []string{"write_file", "edit_file", "create_directory"} {
		if err := l.Log(audit.Record{Tenant: "t1", Tool: tool, Outcome: audit.OutcomeOK}); err != nil {
			log.Fatal(err)
		}
	}
	res, err := audit.Verify(bytes.NewReader(buf.Bytes()))
	fmt.Println(res.Lines, res.Head == l.Head(), err)

	// Remove the second line: the third no longer chains.
	lines := strings.SplitAfter(buf.String(), "\n")
	_, err = audit.Verify(strings.NewReader(lines[0] + lines[2]))
	var le *audit.LineError
	fmt.Println(errors.As(err, &le), le.Line, errors.Is(err, audit.ErrChain))
	// Output:
	// 3 true <nil>
	// true 2 true
}
