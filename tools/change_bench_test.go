package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

// changeBenchLines is an 80-line text file of about 4 KiB.
func changeBenchLines(tag string) string {
	var sb strings.Builder
	for i := range 80 {
		fmt.Fprintf(&sb, "line %2d of the file, %s, with some words to fill it to width\n", i+1, tag)
	}
	return sb.String()
}

// BenchmarkChangeTools measures write_file (an 80-line rewrite of every
// line) and edit_file (one line of 80) in memory, where the tool's own
// work is all there is, and on local disk, where it writes and fsyncs
// the file and its directory. "listened" adds an event listener, for
// which edit_file builds the diff its FileEdited event carries; without
// one neither tool builds a diff.
//
//	go test ./tools -run '^$' -bench 'ChangeTools' -benchmem
func BenchmarkChangeTools(b *testing.B) {
	for _, store := range []string{"memfs", "local"} {
		for _, listened := range []bool{false, true} {
			name := store + "/quiet"
			if listened {
				name = store + "/listened"
			}
			b.Run(name, func(b *testing.B) {
				var be backend.Backend = newMemFS()
				if store == "local" {
					lb, err := local.New(b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { lb.Close() })
					be = lb
				}
				opts := Options{NoContentHashes: true}
				if listened {
					opts.OnEvent = func(context.Context, Event) {}
				}
				s, err := New(be, opts)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				versions := []string{changeBenchLines("first"), changeBenchLines("second")}
				write := func(i int) json.RawMessage {
					raw, _ := json.Marshal(map[string]string{"path": "f.txt", "content": versions[i%2]})
					return raw
				}
				edits := []json.RawMessage{
					json.RawMessage(`{"path":"f.txt","old_text":"line 40 of the file, first,","new_text":"line 40 of the file, edited,"}`),
					json.RawMessage(`{"path":"f.txt","old_text":"line 40 of the file, edited,","new_text":"line 40 of the file, first,"}`),
				}
				if _, err := s.Call(ctx, "write_file", write(0)); err != nil {
					b.Fatal(err)
				}
				b.Run("write_file", func(b *testing.B) {
					raws := []json.RawMessage{write(0), write(1)}
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						i++
						if _, err := s.Call(ctx, "write_file", raws[i%2]); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run("edit_file", func(b *testing.B) {
					if _, err := s.Call(ctx, "write_file", write(0)); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						if _, err := s.Call(ctx, "edit_file", edits[i%2]); err != nil {
							b.Fatal(err)
						}
						i++
					}
				})
			})
		}
	}
}
