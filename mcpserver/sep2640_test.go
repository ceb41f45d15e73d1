package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// rawResult keeps a custom method's result as the server sent it.
type rawResult struct {
	mcp.ResultBase
	m map[string]any
}

func (r *rawResult) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &r.m) }

// TestSkillsSEP2640Fields: every file of skills/list and skills/get
// carries its size (the length of the bytes its digest covers);
// skills/get carries ttlMs and cacheScope like skills/list; on protocol
// 2026-07-28 skills/list, skills/get and resources/directory/read carry
// resultType "complete", and on 2025-11-25, which has no such field,
// none.
func TestSkillsSEP2640Fields(t *testing.T) {
	guide := "the guide, with a multibyte é\n"
	w := newWorkspace(t, tools.Options{}, map[string]string{
		"skills/alpha/SKILL.md":     alphaSkill,
		"skills/alpha/ref/guide.md": guide,
	})
	src := newSkillSource(t, w)
	ctx := context.Background()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "test-host"}, nil)
			for _, m := range []string{"skills/list", "resources/directory/read"} {
				if err := mcp.AddSendingCustomMethod[*dirParams, *rawResult](c, m); err != nil {
					t.Fatal(err)
				}
			}
			if err := mcp.AddSendingCustomMethod[*getParams, *rawResult](c, "skills/get"); err != nil {
				t.Fatal(err)
			}
			cs := connectClient(t, New(w.set, Options{Skills: src}), c, version)
			wantType := map[string]any{"2026-07-28": "complete", "2025-11-25": nil}[version]
			list, err := mcp.CallCustomMethod[*dirParams, *rawResult](ctx, cs, "skills/list", &dirParams{})
			if err != nil {
				t.Fatal(err)
			}
			get, err := mcp.CallCustomMethod[*getParams, *rawResult](ctx, cs, "skills/get", &getParams{URI: "skill://alpha/SKILL.md"})
			if err != nil {
				t.Fatal(err)
			}
			dir, err := mcp.CallCustomMethod[*dirParams, *rawResult](ctx, cs, "resources/directory/read", &dirParams{URI: "skill://alpha"})
			if err != nil {
				t.Fatal(err)
			}
			for name, r := range map[string]*rawResult{"skills/list": list, "skills/get": get, "resources/directory/read": dir} {
				if r.m["resultType"] != wantType {
					t.Errorf("%s: resultType %v, want %v", name, r.m["resultType"], wantType)
				}
			}
			for name, r := range map[string]*rawResult{"skills/list": list, "skills/get": get} {
				if r.m["cacheScope"] != "private" || r.m["ttlMs"] != float64(DefaultSkillsInterval.Milliseconds()) {
					t.Errorf("%s: cacheScope %v, ttlMs %v", name, r.m["cacheScope"], r.m["ttlMs"])
				}
			}
			sizes := map[string]float64{"skill://alpha/SKILL.md": float64(len(alphaSkill)), "skill://alpha/ref/guide.md": float64(len(guide))}
			entries := []any{get.m["skill"]}
			entries = append(entries, list.m["skills"].([]any)...)
			for _, e := range entries {
				for _, r := range e.(map[string]any)["resources"].([]any) {
					r := r.(map[string]any)
					if got, ok := r["size"].(float64); !ok || got != sizes[r["uri"].(string)] {
						t.Errorf("%s: size %v, want %v", r["uri"], r["size"], sizes[r["uri"].(string)])
					}
				}
			}
		})
	}
}
