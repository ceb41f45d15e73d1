package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/time/rate"

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
		if errors.Is(err, tools.KindNotFound) {
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
// through any server sharing it changed their file. It holds each
// session's subscriptions until the session unsubscribes or ends, and
// no more of them than the servers' limits let a session make. It is
// safe for concurrent use.
type Changes struct {
	mu sync.Mutex
	// subs holds the sessions subscribed to each URI, with the server
	// each session is served by.
	subs map[string]map[*mcp.ServerSession]*mcp.Server
	// sessions holds each subscribed session's URIs and its subscribe
	// rate.
	sessions map[*mcp.ServerSession]*sessionSubs
}

// sessionSubs are one session's subscriptions.
type sessionSubs struct {
	uris    map[string]bool
	limiter *rate.Limiter
}

// NewChanges returns a Changes with no subscribers.
func NewChanges() *Changes {
	return &Changes{subs: make(map[string]map[*mcp.ServerSession]*mcp.Server), sessions: make(map[*mcp.ServerSession]*sessionSubs)}
}

// Subscription limits: a session holds at most
// Options.MaxSubscriptions (DefaultMaxSubscriptions) of them, each URI at
// most MaxSubscriptionURIBytes long (longer than any path a backend
// takes), and subscribes at most SubscribeRate times a second on average,
// SubscribeBurst at once (enough for a host to subscribe its whole set
// when it starts).
const (
	DefaultMaxSubscriptions = 100
	MaxSubscriptionURIBytes = 4096
	SubscribeRate           = 10
	SubscribeBurst          = 100
)

// errSubscription is a refused subscription: an invalid-params error
// naming why.
func errSubscription(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// add records the subscription of ss (served by s) to uri, within max
// subscriptions for the session and the subscribe rate. The session's
// subscriptions are dropped when it ends.
func (c *Changes) add(uri string, s *mcp.Server, ss *mcp.ServerSession, max int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := c.sessions[ss]
	if sub == nil {
		sub = &sessionSubs{uris: map[string]bool{}, limiter: rate.NewLimiter(SubscribeRate, SubscribeBurst)}
		c.sessions[ss] = sub
		go func() {
			// Session.Wait returns when the session ends, however it
			// ends (closed, timed out, its connection gone).
			ss.Wait()
			c.drop(ss)
		}()
	}
	if !sub.uris[uri] && len(sub.uris) >= max {
		return errSubscription("This session already holds %d subscriptions, the most it may; unsubscribe from one first.", max)
	}
	if !sub.limiter.Allow() {
		return errSubscription("Too many subscribe requests from this session (at most %d a second); retry later.", SubscribeRate)
	}
	sub.uris[uri] = true
	if c.subs[uri] == nil {
		c.subs[uri] = make(map[*mcp.ServerSession]*mcp.Server)
	}
	c.subs[uri][ss] = s
	return nil
}

// remove drops the subscription of ss to uri.
func (c *Changes) remove(uri string, ss *mcp.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sub := c.sessions[ss]; sub != nil {
		delete(sub.uris, uri)
	}
	c.unlink(uri, ss)
}

func (c *Changes) unlink(uri string, ss *mcp.ServerSession) {
	delete(c.subs[uri], ss)
	if len(c.subs[uri]) == 0 {
		delete(c.subs, uri)
	}
}

// drop forgets every subscription of a session that ended.
func (c *Changes) drop(ss *mcp.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sub := c.sessions[ss]; sub != nil {
		for uri := range sub.uris {
			c.unlink(uri, ss)
		}
	}
	delete(c.sessions, ss)
}

// Subscriptions returns how many subscriptions the sessions hold in all,
// and how many sessions hold them.
func (c *Changes) Subscriptions() (subscriptions, sessions int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sub := range c.sessions {
		subscriptions += len(sub.uris)
	}
	return subscriptions, len(c.sessions)
}

// Changed sends notifications/resources/updated for every subscribed URI
// that ev changed: the file itself, or, for a directory, the files below
// it. The tools' changes reach it on their own; a host calls it for
// changes made past the tools, such as a checkpoint restore.
func (c *Changes) Changed(ctx context.Context, ev tools.Event) {
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
	targets := map[target]audience{}
	c.mu.Lock()
	for uri, sessions := range c.subs {
		for _, t := range touched {
			if uri == t || strings.HasPrefix(uri, t+"/") {
				for ss, s := range sessions {
					k := target{uri, s}
					if targets[k] == nil {
						targets[k] = audience{}
					}
					targets[k][ss] = true
				}
				break
			}
		}
	}
	c.mu.Unlock()
	// The notification outlives the call that caused it.
	ctx = context.WithoutCancel(ctx)
	for t, a := range targets {
		// The server may serve other namespaces' sessions subscribed to
		// the same URI: the audience keeps the update to these.
		_ = t.s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: t.uri, Meta: mcp.Meta{audienceKey: a}})
	}
}

// errStatelessSubscribe refuses resources/subscribe of a client that
// cannot be told of an update.
var errStatelessSubscribe = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
	Message: "resources/subscribe: this server runs over stateless HTTP, which cannot send notifications/resources/updated to a client " +
		"of protocol 2025-11-25 or earlier; subscribe with protocol 2026-07-28 (subscriptions/listen) or use a stateful server"}

// subscribe accepts a subscription to a file resource the policy lets the
// model read (a missing file may be subscribed to, as it may appear),
// within the session's limits.
func (h *handlers) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if h.opts.Stateless && protocolVersion(nil, req.Params.Meta) < newProtocol {
		// 2026-07-28 subscribes through subscriptions/listen, whose
		// stream carries the updates; before it, a stateless server has
		// no stream to send them on.
		return errStatelessSubscribe
	}
	if len(uri) > MaxSubscriptionURIBytes {
		return errSubscription("The resource URI is %d bytes long; a subscription's URI may be at most %d.", len(uri), MaxSubscriptionURIBytes)
	}
	name, ok := filePath(uri)
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	if err := h.readable(ctx, name); err != nil {
		return err
	}
	if req.Session == nil {
		return errSubscription("resources/subscribe needs a session")
	}
	return h.changes.add(uri, h.server, req.Session, h.opts.MaxSubscriptions)
}

// readable judges name as resources/read would, without reading it: the
// policy and the Permission hook first, then whether it is a file. A
// file that does not exist (yet) passes.
func (h *handlers) readable(ctx context.Context, name string) error {
	// ReadFile with a negative cap judges and opens the file, then
	// refuses it as larger than the cap before reading a byte, so
	// nothing counts as read.
	_, err := h.set.ReadFile(ctx, name, -1)
	msg, ok := RetryMessage(err)
	switch {
	case err == nil:
		return nil
	case !ok:
		return err
	case errors.Is(err, tools.KindNotFound),
		errors.Is(err, tools.KindTooLarge) && strings.HasPrefix(msg, "File '"+name+"' is larger than "):
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

func (h *handlers) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	if req.Session != nil {
		h.changes.remove(req.Params.URI, req.Session)
	}
	return nil
}
