package mcpserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// TestReadResource: a file the policy lets the model read comes back
// whole with its MIME type, as text or as a blob; what the model may not
// read, what is missing and what is too large is an error.
func TestReadResource(t *testing.T) {
	w := newWorkspace(t, tools.Options{Denied: []string{"secret/**"}}, map[string]string{
		"notes.md":     "# notes\n",
		"a b%.txt":     "spaced\n",
		"img.png":      "\x89PNG\r\n\x1a\n\x00\x00",
		"data.bin":     "\x00\x01\x02",
		"big.txt":      strings.Repeat("x", 2000),
		"secret/k.txt": "key\n",
	})
	cs := connect(t, New(w.set, Options{Resources: true, MaxResourceBytes: 1000}), nil)
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != FileURITemplate {
		t.Fatalf("templates %+v, %v", tmpl, err)
	}
	tests := []struct {
		name, uri, mime, text string
		blob                  string
		errCode               int64
		errText               string
	}{
		{name: "markdown", uri: "fencefs:///notes.md", mime: "text/markdown; charset=utf-8", text: "# notes\n"},
		{name: "escaped name", uri: FileURI("a b%.txt"), mime: "text/plain; charset=utf-8", text: "spaced\n"},
		{name: "image", uri: "fencefs:///img.png", mime: "image/png", blob: "\x89PNG\r\n\x1a\n\x00\x00"},
		{name: "binary", uri: "fencefs:///data.bin", mime: "application/octet-stream", blob: "\x00\x01\x02"},
		{name: "missing", uri: "fencefs:///nope.txt", errCode: mcp.CodeResourceNotFound},
		{name: "denied", uri: "fencefs:///secret/k.txt", errCode: jsonrpc.CodeInvalidParams, errText: "denied"},
		{name: "too large", uri: "fencefs:///big.txt", errCode: jsonrpc.CodeInvalidParams, errText: "larger than 1000 bytes"},
		{name: "outside", uri: "fencefs:///../etc/passwd", errCode: jsonrpc.CodeInvalidParams, errText: "not a clean path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
			if tt.errCode != 0 {
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != tt.errCode || !strings.Contains(werr.Message, tt.errText) {
					t.Fatalf("error %v, want code %d with %q", err, tt.errCode, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := res.Contents[0]
			if c.URI != tt.uri || c.MIMEType != tt.mime || c.Text != tt.text || string(c.Blob) != tt.blob {
				t.Errorf("got %+v", c)
			}
		})
	}
}

// TestCompletePath: completion of the template's path offers what
// list_directory would show, never a denied or hidden entry.
func TestCompletePath(t *testing.T) {
	w := newWorkspace(t, tools.Options{Denied: []string{"secret"}}, map[string]string{
		"src/main.go": "", "src/main_test.go": "", "src/util.go": "", "secret/k": "", "script.sh": "", ".env": "",
	})
	cs := connect(t, New(w.set, Options{Resources: true}), nil)
	tests := []struct{ prefix, want string }{
		{"s", "script.sh,src/"},
		{"src/ma", "src/main.go,src/main_test.go"},
		{"secret/", ""},
		{".e", ""},
		{"../", ""},
	}
	for _, tt := range tests {
		res, err := cs.Complete(context.Background(), &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: FileURITemplate},
			Argument: mcp.CompleteParamsArgument{Name: "path", Value: tt.prefix},
		})
		if err != nil {
			t.Fatalf("%q: %v", tt.prefix, err)
		}
		if got := strings.Join(res.Completion.Values, ","); got != tt.want {
			t.Errorf("%q completes to %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

// TestSubscriptions: a session subscribed to a file hears when a tool
// call of another session, on another server sharing the Changes,
// changes it, and hears nothing of other files.
func TestSubscriptions(t *testing.T) {
	w := newWorkspace(t, tools.Options{Tools: tools.AllTools()}, map[string]string{"watched.md": "a\n", "other.md": "b\n"})
	changes := NewChanges()
	updated := make(chan string, 10)
	watcher := connect(t, New(w.set, Options{Resources: true, Changes: changes}), &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
	})
	writer := connect(t, New(w.set, Options{Resources: true, Changes: changes}), nil)
	ctx := context.Background()
	uri := FileURI("watched.md")
	if err := watcher.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	call(t, writer, "write_file", map[string]any{"path": "other.md", "content": "c\n"})
	call(t, writer, "edit_file", map[string]any{"path": "watched.md", "old_text": "a", "new_text": "z"})
	call(t, writer, "move_file", map[string]any{"source": "watched.md", "destination": "moved.md"})
	var got []string
	for len(got) < 2 {
		select {
		case u := <-updated:
			got = append(got, u)
		case <-time.After(10 * time.Second):
			t.Fatalf("after 10s heard %q, want two updates of %s", got, uri)
		}
	}
	if !slices.Equal(got, []string{uri, uri}) {
		t.Errorf("heard %q, want the edit and the move of %s", got, uri)
	}
}
