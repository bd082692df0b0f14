package server_test

import (
	"net/http"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// TestMaxRunsOverloaded checks the cap on runs in flight: a run asked for
// beyond it gets 503 overloaded with Retry-After at once (no wait, no run
// recorded on its thread), and the thread can run once a run has ended.
func TestMaxRunsOverloaded(t *testing.T) {
	gate := make(chan struct{})
	h := apptest.New(t, supportApp(t), dawntest.Script().Wait(gate).Reply("ok").Repeat(), apptest.Options{MaxRuns: 2})
	base := h.Serve(t)
	held := []*http.Response{
		post(t, base+"/threads/a/runs/stream", runBody("/plain", "hi")),
		post(t, base+"/threads/b/runs/stream", runBody("/plain", "hi")),
	}
	for _, path := range []string{"/threads/c/runs/stream", "/threads/c/runs/wait"} {
		resp := post(t, base+path, runBody("/plain", "hi"))
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
			resp.Body.Close()
			close(gate)
			// (runs/wait would now hold the test until its run ends.)
			t.Fatalf("%s with 2 runs in flight of 2: %d, Retry-After %q; want 503 with Retry-After 1", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if e := decodeErr(t, resp); e.Error.Kind != "overloaded" {
			t.Errorf("%s: kind %q, want overloaded", path, e.Error.Kind)
		}
	}
	if n := runsOf(t, base, "c"); n != 0 {
		t.Errorf("the refused requests recorded %d runs on their thread", n)
	}
	close(gate)
	for _, resp := range held {
		if got := readSSE(t, resp); len(got) == 0 || got[len(got)-1].Type != stream.TypeDone {
			t.Errorf("a held run ended with %v, want done", dawntest.Types(got))
		}
	}
	if resp := post(t, base+"/threads/c/runs/wait", runBody("/plain", "hi")); resp.StatusCode != http.StatusOK {
		t.Errorf("runs/wait once the held runs ended: %d %+v", resp.StatusCode, decodeErr(t, resp))
	} else {
		resp.Body.Close()
	}
}
