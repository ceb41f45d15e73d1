package mcpserver

import (
	"context"
	"mime"
	"net/url"
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// FileURITemplate is the resource template of the namespace's files:
// path runs from the namespace root ("ws/notes.md" in a rooted namespace,
// "notes.md" in a plain one), each component percent-encoded.
const FileURITemplate = "fencefs:///{+path}"

// fileURIPrefix starts every file resource's URI.
const fileURIPrefix = "fencefs:///"

// maxCompletions is how many paths one completion/complete answers
// with, the protocol's limit.
const maxCompletions = 100

func fileTemplate() *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{
		Name:        "file",
		Title:       "Files of the namespace",
		URITemplate: FileURITemplate,
		Description: "A file of the namespace the policy lets the model read, by its path from the namespace root.",
	}
}

// FileURI returns the resource URI of the file at the canonical path
// name, as events carry it ("/ws/notes.md" or "notes.md").
func FileURI(name string) string {
	parts := strings.Split(strings.TrimPrefix(name, "/"), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return fileURIPrefix + strings.Join(parts, "/")
}

// filePath returns the path from the namespace root a file resource's URI
// names.
func filePath(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, fileURIPrefix)
	if !ok || strings.ContainsAny(rest, "?#") {
		return "", false
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", false
	}
	return p, true
}

// readResource serves resources/read of a file: text when it is UTF-8
// without NUL bytes, a blob otherwise, with the MIME type its name
// suggests.
func (h *handlers) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, ok := filePath(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := h.set.ReadFile(ctx, name, h.opts.MaxResourceBytes)
	if msg, ok := RetryMessage(err); ok {
		if strings.HasPrefix(msg, "File not found") {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
	}
	if err != nil {
		return nil, err
	}
	rc := contents(uri, name, data)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
}

// contents is the resource content of the file name: text when it is
// UTF-8 without NUL bytes, a blob otherwise, with the MIME type its name
// suggests.
func contents(uri, name string, data []byte) *mcp.ResourceContents {
	rc := &mcp.ResourceContents{URI: uri}
	text := utf8.Valid(data) && !strings.ContainsRune(string(data), 0)
	rc.MIMEType = mime.TypeByExtension(path.Ext(name))
	switch {
	case text && rc.MIMEType == "":
		rc.MIMEType = "text/plain; charset=utf-8"
	case !text && (rc.MIMEType == "" || strings.HasPrefix(rc.MIMEType, "text/")):
		rc.MIMEType = "application/octet-stream"
	}
	if text {
		rc.Text = string(data)
	} else {
		rc.Blob = data
	}
	return rc
}

// complete answers completion/complete for the path of the file
// template with the entries the policy shows; anything else gets no
// values.
func (h *handlers) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	p := req.Params
	if p == nil || p.Ref == nil || p.Ref.Type != "ref/resource" || p.Ref.URI != FileURITemplate || p.Argument.Name != "path" {
		return res, nil
	}
	paths, more, err := h.set.CompletePath(ctx, p.Argument.Value, maxCompletions)
	if _, ok := RetryMessage(err); ok {
		return res, nil // nothing there the model may see
	}
	if err != nil {
		return nil, err
	}
	res.Completion.Values = append(res.Completion.Values, paths...)
	res.Completion.HasMore = more
	return res, nil
}

// Changes tells the subscribers of file resources when a tool call
// through any server sharing it changed their file. It is safe for
// concurrent use.
type Changes struct {
	mu sync.Mutex
	// subs counts the subscriptions of each URI on each server.
	subs map[string]map[*mcp.Server]int
}

// NewChanges returns a Changes with no subscribers.
func NewChanges() *Changes {
	return &Changes{subs: make(map[string]map[*mcp.Server]int)}
}

func (c *Changes) add(uri string, s *mcp.Server) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs[uri] == nil {
		c.subs[uri] = make(map[*mcp.Server]int)
	}
	c.subs[uri][s]++
}

func (c *Changes) remove(uri string, s *mcp.Server) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs[uri][s]--; c.subs[uri][s] <= 0 {
		delete(c.subs[uri], s)
	}
	if len(c.subs[uri]) == 0 {
		delete(c.subs, uri)
	}
}

// changed sends notifications/resources/updated for every subscribed URI
// that ev changed: the file itself, or, for a directory, the files below
// it.
func (c *Changes) changed(ctx context.Context, ev tools.Event) {
	ch, ok := changeOf(ev)
	if !ok {
		return
	}
	touched := []string{FileURI(ch.Path)}
	if ch.From != "" {
		touched = append(touched, FileURI(ch.From))
	}
	type target struct {
		uri string
		s   *mcp.Server
	}
	var targets []target
	c.mu.Lock()
	for uri, servers := range c.subs {
		for _, t := range touched {
			if uri == t || strings.HasPrefix(uri, t+"/") {
				for s := range servers {
					targets = append(targets, target{uri, s})
				}
				break
			}
		}
	}
	c.mu.Unlock()
	// The notification outlives the call that caused it.
	ctx = context.WithoutCancel(ctx)
	for _, t := range targets {
		if !hasSessions(t.s) {
			c.forget(t.s)
			continue
		}
		_ = t.s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: t.uri})
	}
}

// forget drops every subscription of a server whose sessions are gone.
func (c *Changes) forget(s *mcp.Server) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uri, servers := range c.subs {
		delete(servers, s)
		if len(servers) == 0 {
			delete(c.subs, uri)
		}
	}
}

func hasSessions(s *mcp.Server) bool {
	for range s.Sessions() {
		return true
	}
	return false
}

// subscribe accepts a subscription to a file resource.
func (h *handlers) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if _, ok := filePath(req.Params.URI); !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	h.opts.Changes.add(req.Params.URI, h.server)
	return nil
}

func (h *handlers) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	h.opts.Changes.remove(req.Params.URI, h.server)
	return nil
}
