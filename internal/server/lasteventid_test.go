package server_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
)

// TestRejoinAfterTheLargestEventID: a rejoin whose Last-Event-ID is at or
// near the int64 maximum, of a run cut off before its done event (so the
// server makes one, numbered after the id the client saw), never gets an
// event id that wrapped around: ids stay positive and increasing.
func TestRejoinAfterTheLargestEventID(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hi."), apptest.Options{})
	base := h.Serve(t)
	ctx := context.Background()
	if r := post(t, base+"/threads/big/runs/wait", runBody("/plain", "hello")); r.StatusCode != http.StatusOK {
		t.Fatalf("runs/wait: %d %s", r.StatusCode, readBody(t, r))
	}
	if _, err := h.Store.BeginRunChecked(ctx, store.Run{ID: "cut", ThreadID: "big", Route: "/plain"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.FinishRun(ctx, "cut", store.RunInterrupted, "the server stopped", nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"9223372036854775807", "9223372036854775806", "9007199254740993"} {
		req, _ := http.NewRequest(http.MethodGet, base+"/threads/big/runs/cut/stream", nil)
		req.Header.Set("Last-Event-ID", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Last-Event-ID %s: %d %s, want 200", id, resp.StatusCode, readBody(t, resp))
			continue
		}
		events := readSSE(t, resp)
		if len(events) != 1 || events[0].Type != stream.TypeDone || events[0].ID <= 0 {
			t.Errorf("Last-Event-ID %s: %+v, want one done event with a positive id", id, events)
			continue
		}
		if n, _ := strconv.ParseInt(id, 10, 64); events[0].ID <= n && n < 1<<53 {
			t.Errorf("Last-Event-ID %s: done has id %d, want one after it", id, events[0].ID)
		}
	}
}
