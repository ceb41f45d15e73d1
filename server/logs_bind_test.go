package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"testing"
)

// TestBindLogs: a request's goroutine and those it starts find the
// request's call; afterwards the goroutine has its labels back and
// nothing stays bound.
func TestBindLogs(t *testing.T) {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("outer", "1")))
	defer pprof.SetGoroutineLabels(context.Background())
	outer := getProfLabel()
	want := callInfo{requestID: "r1"}
	var inHandler, inChild callInfo
	h := bindLogs(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inHandler = boundCallInfo()
		done := make(chan struct{})
		go func() { // as the SDK's JSON-RPC connection does
			go func() {
				inChild = boundCallInfo()
				close(done)
			}()
		}()
		<-done
	}))
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	h.ServeHTTP(httptest.NewRecorder(), req.WithContext(withCallInfo(req.Context(), want)))
	if inHandler != want || inChild != want {
		t.Errorf("bound: handler %+v, its goroutines' %+v, want %+v", inHandler, inChild, want)
	}
	if getProfLabel() != outer {
		t.Error("the goroutine's labels were not restored")
	}
	if got := boundCallInfo(); got != (callInfo{}) {
		t.Errorf("after the request the goroutine still finds %+v", got)
	}
	boundCalls.Lock()
	n := len(boundCalls.m)
	boundCalls.Unlock()
	if n != 0 {
		t.Errorf("%d calls stay bound after their requests", n)
	}
}

// BenchmarkBindLogs is what binding costs each request.
func BenchmarkBindLogs(b *testing.B) {
	h := bindLogs(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req = req.WithContext(withCallInfo(req.Context(), callInfo{tenant: "t1", requestID: "0123456789abcdef"}))
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
}
