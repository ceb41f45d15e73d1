package security

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/tools"
)

// fuzzLayout is the tree the fuzz targets attack: the base layout and a
// few links out of the root.
func fuzzLayout(s secrets) layout {
	l := baseLayout(s)
	l["ws/x-out-dir"] = link("../ws-evil")
	l["ws/x-out-file"] = link("@/ws-evil/secret.txt")
	l["ws/x-out-dangle"] = link("../outside/new.txt")
	l["ws/lnk-mid"] = link("sub")
	return l
}

// fuzzWorlds returns a local and a mounted world over fuzzLayout, with a
// tool set each, made once per fuzz target.
func fuzzWorlds(f *testing.F) ([]*world, []*tools.Set) {
	f.Helper()
	var ws []*world
	var sets []*tools.Set
	for _, mount := range []bool{false, true} {
		sec := newSecrets()
		w := newLocalWorld(f, sec, fuzzLayout(sec), mount)
		s, err := tools.New(w.b, tools.Options{Tools: tools.AllTools(), Cwd: w.cwd, MaxReadChars: 20_000, RipgrepTimeout: 10 * callTimeout})
		if err != nil {
			f.Fatal(err)
		}
		ws, sets = append(ws, w), append(sets, s)
	}
	return ws, sets
}

// fuzzCall runs one fuzzed call in every world and checks what every call
// owes: no panic, no fatal error, no canary, nothing changed outside the
// root.
func fuzzCall(t *testing.T, ws []*world, sets []*tools.Set, tool string, raw []byte, echo string) {
	for i, w := range ws {
		before := w.snap(t)
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		out, err := sets[i].Call(ctx, tool, raw)
		cancel()
		label := w.kind + " " + tool + " " + string(raw)
		if err != nil && !tools.IsRetry(err) && !pendingFatal(w.kind, tool, err) {
			t.Errorf("%s: fatal error %v", label, err)
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		w.checkLeaks(t, label, echo, out+"\n"+msg)
		w.checkChanges(t, label, before, w.snap(t), false)
	}
}

// FuzzToolArgs feeds arbitrary argument bytes to every tool, in a plain
// local namespace and a mounted one: no input panics, fails fatally,
// shows the outside or changes it.
func FuzzToolArgs(f *testing.F) {
	all := tools.AllTools()
	for i, tool := range all {
		for _, p := range []string{"a.txt", "../secret.txt", "x-out-dir/secret.txt", "sub", "x-out-dangle"} {
			raw, _ := json.Marshal(pathArgs(tool, p))
			f.Add(uint8(i), raw)
		}
		f.Add(uint8(i), []byte(`{}`))
		f.Add(uint8(i), []byte(`null`))
		f.Add(uint8(i), []byte(`{"path":null,"path":"a.txt"}`))
		f.Add(uint8(i), []byte(`{"path":"a.txt","extra":1}`))
		f.Add(uint8(i), []byte(`{"path":["a.txt"]}`))
		f.Add(uint8(i), []byte(`{"path":"\u0000"}`))
		f.Add(uint8(i), []byte("{\"path\":\"\xff\xfe\"}"))
		f.Add(uint8(i), []byte(`[`))
	}
	f.Add(uint8(2), []byte(`{"path":"a.txt","replacements":[{"old_text":"hello","new_text":"x"},{"old_text":"x","new_text":"hello"}]}`))
	f.Add(uint8(0), []byte(`{"path":"a.txt","offset":1e300,"limit":-1}`))
	f.Add(uint8(9), []byte(`{"pattern":"--pre=sh","path":"x-out-dir","context":20,"glob":"!*"}`))
	ws, sets := fuzzWorlds(f)
	f.Fuzz(func(t *testing.T, idx uint8, raw []byte) {
		tool := all[int(idx)%len(all)]
		fuzzCall(t, ws, sets, tool, raw, fuzzEcho(raw))
	})
}

// FuzzToolPath aims every tool at an arbitrary path, in a plain local
// namespace and a mounted one, with the same checks as FuzzToolArgs.
func FuzzToolPath(f *testing.F) {
	all := tools.AllTools()
	for _, group := range [][]pathCase{dotDotCases, absoluteCases, invalidCases, oddNameCases, symlinkCases} {
		for i, c := range group {
			if len(c.path) < 1000 && !strings.HasPrefix(c.path, "@") {
				f.Add(uint8(i), c.path)
			}
		}
	}
	ws, sets := fuzzWorlds(f)
	f.Fuzz(func(t *testing.T, idx uint8, p string) {
		tool := all[int(idx)%len(all)]
		raw, err := json.Marshal(pathArgs(tool, p))
		if err != nil {
			t.Fatal(err)
		}
		fuzzCall(t, ws, sets, tool, raw, p)
	})
}

// fuzzEcho returns the "path" argument of raw, if any, which a message
// may quote.
func fuzzEcho(raw []byte) string {
	var args struct {
		Path string `json:"path"`
	}
	json.Unmarshal(raw, &args)
	return args.Path
}
