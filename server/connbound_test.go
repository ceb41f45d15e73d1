package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestServeBoundsConnections serves with MaxConnections 2: two
// connections in calls take the bound; a third gets 503 saying why, and
// /healthz is answered on a spare connection; with every spare
// connection taken too the next one waits to be accepted, and stopping
// the server ends that wait; a connection closed gives its slot back.
func TestServeBoundsConnections(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		fmt.Fprintln(w, "done")
	})
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "x") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, mux, ServeOptions{MaxConnections: 2}) }()
	// get returns the answer's status, body and headers, with Connection:
	// close (which the client takes out of the headers) put back.
	get := func(tr *http.Transport, path string) (int, string, http.Header) {
		t.Helper()
		resp, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Get(url + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.Close {
			resp.Header.Set("Connection", "close")
		}
		return resp.StatusCode, string(body), resp.Header
	}

	// Two calls in progress take the bound.
	slow := []*http.Transport{{}, {}}
	done := make(chan struct{}, 2)
	for _, tr := range slow {
		go func() {
			get(tr, "/slow")
			done <- struct{}{}
		}()
	}
	<-entered
	<-entered
	code, body, header := get(&http.Transport{}, "/x")
	if want := connectionLimitText(2) + "\n"; code != http.StatusServiceUnavailable || body != want || header.Get("Retry-After") == "" || header.Get("Connection") != "close" {
		t.Errorf("beyond the bound: %d %q %v, want 503 %q", code, body, header, want)
	}
	if code, body, _ := get(&http.Transport{}, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz beyond the bound: %d %q", code, body)
	}

	// The calls end; their clients close their connections: a new one is
	// served again once the server has seen them close.
	close(release)
	<-done
	<-done
	for _, tr := range slow {
		tr.CloseIdleConnections()
	}
	deadline := time.Now().Add(time.Minute)
	for {
		code, body, _ := get(&http.Transport{}, "/x")
		if code == http.StatusOK && body == "x\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the connections closed: %d %q", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Take the bound and every spare connection with connections that
	// send nothing; the next one is not accepted, and stopping ends the
	// wait.
	for range 2 + spareConnections(2) + 1 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after it was stopped with a connection waiting to be accepted")
	}
}

// TestBoundedListenerCounts: a connection's slot is given back once
// however often it is closed, and a spare one's to the spare count.
func TestBoundedListenerCounts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newBoundedListener(ln, 1, slog.New(slog.DiscardHandler))
	defer l.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for range 2 {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	if first.(*boundedConn).spare || !second.(*boundedConn).spare {
		t.Fatalf("spare: %v, %v; want the second only", first.(*boundedConn).spare, second.(*boundedConn).spare)
	}
	for range 3 {
		first.Close()
		second.Close()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open != 0 || l.over != 0 {
		t.Errorf("after closing: %d open, %d spare; want 0, 0", l.open, l.over)
	}
}
