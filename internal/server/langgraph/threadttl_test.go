package langgraph_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/store"
)

// TestThreadTTLOverHTTP: POST /threads (LangGraph's, with supersteps, and
// Dawn's) and PATCH /threads/:id keep a ttl in minutes as the thread's
// TTL; a bad ttl is a 400 naming ttl and creates nothing; a thread
// created without one has none and is answered as before.
func TestThreadTTLOverHTTP(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	ctx := context.Background()
	ttlOf := func(id string) time.Duration {
		t.Helper()
		th, err := h.Store.GetThread(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return th.TTL
	}

	status, body := storeCall(t, "POST", url+"/threads", `{"thread_id":"lg","metadata":{"a":1},"ttl":{"ttl":30,"strategy":"delete"}}`)
	if status != 200 || ttlOf("lg") != 30*time.Minute {
		t.Fatalf("create with ttl 30: %d %s, TTL %v", status, body, ttlOf("lg"))
	}
	status, body = storeCall(t, "POST", url+"/threads", `{"thread_id":"plain"}`)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &fields); status != 200 || err != nil || len(fields) != 5 || ttlOf("plain") != 0 {
		t.Errorf("create without ttl: %d %s, TTL %v; want Dawn's five fields and no TTL", status, body, ttlOf("plain"))
	}
	postOK(t, url+"/threads", `{"thread_id":"steps","graph_id":"/support/acme","ttl":1.5,"supersteps":[
		{"updates":[{"values":{"messages":[{"type":"human","content":"hi"}]},"as_node":"__input__"}]}]}`, nil)
	if got := ttlOf("steps"); got != 90*time.Second {
		t.Errorf("create with supersteps and ttl 1.5: TTL %v, want 1m30s", got)
	}

	status, body = storeCall(t, "PATCH", url+"/threads/plain", `{"ttl":90}`)
	if status != 200 || ttlOf("plain") != 90*time.Minute {
		t.Errorf("PATCH ttl 90: %d %s, TTL %v", status, body, ttlOf("plain"))
	}
	status, _ = storeCall(t, "PATCH", url+"/threads/lg", `{"metadata":{"b":2}}`)
	if status != 200 || ttlOf("lg") != 30*time.Minute {
		t.Errorf("PATCH without ttl: %d, TTL %v; want the TTL kept", status, ttlOf("lg"))
	}

	for _, bad := range []string{`{"ttl":5,"strategy":"keep_latest"}`, `{"ttl":5,"strategy":"archive"}`, `{"strategy":"delete"}`, `0`, `-1`, `"5"`} {
		status, body := storeCall(t, "POST", url+"/threads", `{"thread_id":"bad","ttl":`+bad+`}`)
		if status != 400 || !strings.Contains(body, "ttl") || !strings.Contains(body, "delete") {
			t.Errorf("create with ttl %s: %d %s, want a 400 naming ttl and saying what to write", bad, status, body)
		}
		status, body = storeCall(t, "PATCH", url+"/threads/lg", `{"ttl":`+bad+`}`)
		if status != 400 || !strings.Contains(body, "ttl") {
			t.Errorf("PATCH with ttl %s: %d %s, want a 400 naming ttl", bad, status, body)
		}
	}
	if _, err := h.Store.GetThread(ctx, "bad"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a create with a bad ttl made the thread: %v", err)
	}
	if got := ttlOf("lg"); got != 30*time.Minute {
		t.Errorf("after refused PATCHes, TTL %v, want 30m", got)
	}
}
