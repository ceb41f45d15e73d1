package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tools"
)

// TestSubscriptionBounds: a session's subscriptions are judged as
// resources/read is (a denied path, a directory, a path outside the
// namespace are refused; a file that may appear is not), their URIs and
// count are bounded, re-subscribing does not count twice, and they are
// freed when the session ends, whoever holds the Changes.
func TestSubscriptionBounds(t *testing.T) {
	w := newWorkspace(t, tools.Options{Denied: []string{"secret/**"}}, map[string]string{
		"f.txt":        "x\n",
		"empty.txt":    "",
		"secret/k.txt": "key\n",
		"dir/g.txt":    "g\n",
	})
	changes := NewChanges()
	server := New(w.set, Options{Resources: true, Changes: changes, MaxSubscriptions: 5})
	cs := connectVersion(t, server, nil, "2025-11-25")
	ctx := context.Background()
	sub := func(uri string) error { return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}) }
	refused := func(what string, err error, want string) {
		t.Helper()
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || !strings.Contains(werr.Message, want) {
			t.Errorf("%s: %v, want a refusal with %q", what, err, want)
		}
	}
	for _, uri := range []string{FileURI("f.txt"), FileURI("empty.txt"), FileURI("new.txt"), FileURI("f.txt")} {
		if err := sub(uri); err != nil {
			t.Errorf("subscribe %s: %v", uri, err)
		}
	}
	refused("a denied file", sub(FileURI("secret/k.txt")), "secret/k.txt")
	refused("a file of a denied directory that does not exist", sub(FileURI("secret/none.txt")), "secret/none.txt")
	refused("a directory", sub(FileURI("dir")), "dir")
	refused("outside", sub("fencefs:///../x"), "not a clean path")
	refused("a 1 MB URI", sub(FileURI(strings.Repeat("a", 1<<20))), fmt.Sprint(MaxSubscriptionURIBytes))
	if n, s := changes.Subscriptions(); n != 3 || s != 1 {
		t.Errorf("%d subscriptions of %d sessions held, want 3 of 1", n, s)
	}
	for i := range 2 {
		if err := sub(FileURI(fmt.Sprintf("n%d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	refused("a sixth subscription", sub(FileURI("n9.txt")), "5 subscriptions")
	if err := sub(FileURI("f.txt")); err != nil {
		t.Errorf("subscribing again to a subscribed file at the limit: %v", err)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: FileURI("n0.txt")}); err != nil {
		t.Fatal(err)
	}
	if err := sub(FileURI("n9.txt")); err != nil {
		t.Errorf("a subscription after an unsubscribe: %v", err)
	}
	if n, _ := changes.Subscriptions(); n != 5 {
		t.Errorf("%d subscriptions held, want 5", n)
	}

	// The session ends: its subscriptions go with it, as soon as the
	// server has seen it end.
	var sessions []*mcp.ServerSession
	for ss := range server.Sessions() {
		sessions = append(sessions, ss)
	}
	cs.Close()
	for _, ss := range sessions {
		ss.Wait()
	}
	// A bound against a hang, not a measure of speed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n, s := changes.Subscriptions(); n == 0 && s == 0 {
			break
		}
		if time.Now().After(deadline) {
			n, s := changes.Subscriptions()
			t.Fatalf("after the session ended %d subscriptions of %d sessions are held", n, s)
		}
		time.Sleep(time.Millisecond) // the drop follows Wait in its own goroutine
	}
}

// TestSubscriptionRate: a session subscribing over and over is refused
// once its burst is spent, and the refusal says why.
func TestSubscriptionRate(t *testing.T) {
	w := newWorkspace(t, tools.Options{}, map[string]string{"f.txt": "x\n"})
	cs := connectVersion(t, New(w.set, Options{Resources: true}), nil, "2025-11-25")
	var err error
	// SubscribeBurst requests pass at once; the bucket refills at
	// SubscribeRate a second, so of ten times the burst some are
	// refused however slowly this runs short of minutes.
	for i := 0; i < 10*SubscribeBurst && err == nil; i++ {
		err = cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: FileURI("f.txt")})
	}
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || !strings.Contains(werr.Message, "Too many subscribe requests") {
		t.Errorf("after %d subscribe requests: %v, want a rate refusal", 10*SubscribeBurst, err)
	}
}
