package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/skills"
	"github.com/fencefs/fencefs/tools"
)

type listParams struct {
	mcp.ParamsBase
}

type listResult struct {
	mcp.ResultBase
	Skills []json.RawMessage `json:"skills"`
}

type getParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getResult struct {
	mcp.ResultBase
	Skill struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []struct {
			URI    string `json:"uri"`
			Digest string `json:"digest"`
		} `json:"resources"`
	} `json:"skill"`
}

// newSkillSource serves the skills under w's skills/.
func newSkillSource(t *testing.T, w *workspace) *SkillSource {
	t.Helper()
	b, err := local.New(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	loader, err := skills.New(b, []string{"skills"}, skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSkillSource(context.Background(), loader, w.set, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

const alphaSkill = "---\nname: alpha\ndescription: Does alpha things.\nlicense: MIT\n---\nRead ref/guide.md first.\n"

// TestSkillResources: skills/list and skills/get give each skill's front
// matter and every file with its digest, resources/read serves the files,
// the skill is a prompt too, and a skill added on storage appears after a
// refresh with list-changed notifications.
func TestSkillResources(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{
		"skills/alpha/SKILL.md":     alphaSkill,
		"skills/alpha/ref/guide.md": "the guide\n",
	})
	ctx := context.Background()
	src := newSkillSource(t, w)
	changed := make(chan string, 10)
	client := &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- "resources" },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changed <- "prompts" },
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host"}, client)
	if err := mcp.AddSendingCustomMethod[*listParams, *listResult](c, "skills/list"); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*getParams, *getResult](c, "skills/get"); err != nil {
		t.Fatal(err)
	}
	cs := connectClient(t, New(w.set, Options{Skills: src}), c, "")
	if _, ok := cs.InitializeResult().Capabilities.Extensions[SkillsExtension]; !ok {
		t.Errorf("capabilities %+v lack %s", cs.InitializeResult().Capabilities, SkillsExtension)
	}
	list := func() []json.RawMessage {
		t.Helper()
		res, err := mcp.CallCustomMethod[*listParams, *listResult](ctx, cs, "skills/list", &listParams{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Skills
	}
	if n := len(list()); n != 1 {
		t.Fatalf("skills/list: %d skills, want 1", n)
	}
	get, err := mcp.CallCustomMethod[*getParams, *getResult](ctx, cs, "skills/get", &getParams{URI: "skill://alpha/SKILL.md"})
	if err != nil {
		t.Fatal(err)
	}
	sk := get.Skill
	if sk.URI != "skill://alpha/SKILL.md" || sk.Frontmatter["name"] != "alpha" || sk.Frontmatter["license"] != "MIT" {
		t.Errorf("skills/get: %+v", sk)
	}
	want := map[string]string{"skill://alpha/SKILL.md": "sha256:" + fullHash(alphaSkill), "skill://alpha/ref/guide.md": "sha256:" + fullHash("the guide\n")}
	if len(sk.Resources) != len(want) {
		t.Errorf("resources %+v, want %v", sk.Resources, want)
	}
	for _, r := range sk.Resources {
		if want[r.URI] != r.Digest {
			t.Errorf("resource %s digest %s, want %s", r.URI, r.Digest, want[r.URI])
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Fatalf("read %s: %v", r.URI, err)
		}
		if "sha256:"+fullHash(res.Contents[0].Text) != r.Digest {
			t.Errorf("%s reads %q, which does not match its digest", r.URI, res.Contents[0].Text)
		}
	}
	var werr *jsonrpc.Error
	if _, err := mcp.CallCustomMethod[*getParams, *getResult](ctx, cs, "skills/get", &getParams{URI: "skill://nope/SKILL.md"}); !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("skills/get of an unknown skill: %v, want invalid params", err)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha"})
	if err != nil || len(p.Messages) != 1 {
		t.Fatalf("prompt alpha: %+v, %v", p, err)
	}

	// A new skill on storage.
	w.mkdirWrite(t, "skills/beta/SKILL.md", "---\nname: beta\ndescription: Does beta things.\n---\nBody.\n")
	if err := src.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	heard := map[string]bool{}
	for !heard["resources"] || !heard["prompts"] {
		select {
		case what := <-changed:
			heard[what] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("after 10s heard %v, want resource and prompt list changes", heard)
		}
	}
	if n := len(list()); n != 2 {
		t.Errorf("after the refresh skills/list has %d skills, want 2", n)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "beta"}); err != nil {
		t.Errorf("prompt beta: %v", err)
	}
}

type pageParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type pageResult struct {
	mcp.ResultBase
	Skills []struct {
		URI string `json:"uri"`
	} `json:"skills"`
	NextCursor string `json:"nextCursor"`
	TTLMs      *int   `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

// TestSkillsListPages: a catalog larger than a page is listed in pages
// chained by nextCursor, each skill once and in URI order, every page
// with its cache attributes; a cursor this server did not give is
// invalid params.
func TestSkillsListPages(t *testing.T) {
	files := map[string]string{}
	const n = 2*skillsPageSize + 7
	for i := range n {
		name := fmt.Sprintf("s%03d", i)
		files["skills/"+name+"/SKILL.md"] = "---\nname: " + name + "\ndescription: Skill " + name + ".\n---\nBody.\n"
	}
	w := newWorkspace(t, tools.Options{}, files)
	ctx := context.Background()
	src := newSkillSource(t, w)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host"}, nil)
	if err := mcp.AddSendingCustomMethod[*pageParams, *pageResult](c, "skills/list"); err != nil {
		t.Fatal(err)
	}
	cs := connectClient(t, New(w.set, Options{Skills: src}), c, "")
	var got []string
	cursor, pages := "", 0
	for {
		res, err := mcp.CallCustomMethod[*pageParams, *pageResult](ctx, cs, "skills/list", &pageParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		if len(res.Skills) > skillsPageSize {
			t.Errorf("page %d holds %d skills, more than %d", pages, len(res.Skills), skillsPageSize)
		}
		if res.TTLMs == nil || *res.TTLMs != int(DefaultSkillsInterval.Milliseconds()) || res.CacheScope != "private" {
			t.Errorf("page %d: ttlMs %v, cacheScope %q", pages, res.TTLMs, res.CacheScope)
		}
		for _, sk := range res.Skills {
			got = append(got, sk.URI)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if pages != 3 || len(got) != n || !slices.IsSorted(got) || got[0] != "skill://s000/SKILL.md" || got[n-1] != fmt.Sprintf("skill://s%03d/SKILL.md", n-1) {
		t.Errorf("%d pages, %d skills (first %q), want 3 pages of %d skills in order", pages, len(got), got[:1], n)
	}
	var werr *jsonrpc.Error
	for _, bad := range []string{"not base64!", "c2tpbGw"} {
		if _, err := mcp.CallCustomMethod[*pageParams, *pageResult](ctx, cs, "skills/list", &pageParams{Cursor: bad}); !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("cursor %q: %v, want invalid params", bad, err)
		}
	}
}

type dirParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type dirResult struct {
	mcp.ResultBase
	Resources []struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MIMEType string `json:"mimeType"`
	} `json:"resources"`
}

// TestSkillDirectoryRead: resources/directory/read lists the direct
// children of a skill's root and of its directories (an empty one
// included), directories as inode/directory; a file or an unknown URI
// is invalid params. The extension declares directoryRead.
func TestSkillDirectoryRead(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{
		"skills/alpha/SKILL.md":          alphaSkill,
		"skills/alpha/ref/guide.md":      "the guide\n",
		"skills/alpha/ref/deep/notes.md": "deep\n",
	})
	if err := os.MkdirAll(filepath.Join(w.dir, "skills", "alpha", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host"}, nil)
	if err := mcp.AddSendingCustomMethod[*dirParams, *dirResult](c, "resources/directory/read"); err != nil {
		t.Fatal(err)
	}
	cs := connectClient(t, New(w.set, Options{Skills: newSkillSource(t, w)}), c, "")
	if ext, _ := cs.InitializeResult().Capabilities.Extensions[SkillsExtension].(map[string]any); ext["directoryRead"] != true {
		t.Errorf("the skills extension declares %v, want directoryRead", ext)
	}
	ctx := context.Background()
	for _, tt := range []struct {
		uri  string
		want string
	}{
		{"skill://alpha", "skill://alpha/SKILL.md SKILL.md text/markdown, skill://alpha/empty empty inode/directory, skill://alpha/ref ref inode/directory"},
		{"skill://alpha/ref", "skill://alpha/ref/deep deep inode/directory, skill://alpha/ref/guide.md guide.md " + mime.TypeByExtension(".md")},
		{"skill://alpha/empty", ""},
	} {
		res, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, cs, "resources/directory/read", &dirParams{URI: tt.uri})
		if err != nil {
			t.Fatalf("%s: %v", tt.uri, err)
		}
		var got []string
		for _, r := range res.Resources {
			got = append(got, strings.TrimSpace(r.URI+" "+r.Name+" "+r.MIMEType))
		}
		if strings.Join(got, ", ") != strings.TrimSpace(tt.want) || res.Resources == nil {
			t.Errorf("%s: %q, want %q", tt.uri, strings.Join(got, ", "), tt.want)
		}
	}
	var werr *jsonrpc.Error
	for _, bad := range []string{"skill://alpha/SKILL.md", "skill://nope", "skill://alpha/ref/"} {
		if _, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, cs, "resources/directory/read", &dirParams{URI: bad}); !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %v, want invalid params", bad, err)
		}
	}
}
