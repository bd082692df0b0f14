package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/apptest"
)

// TestPerUserLimits: with limits.per_user in dawn.yaml, ann reaches each
// of her limits (threads, crons, store items, queued runs, requests in
// flight) and gets 429 quota_exceeded naming the setting, with nothing
// kept, while bob, on the same server, works normally; on SQLite and on
// Postgres.
func TestPerUserLimits(t *testing.T) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { perUserLimits(t, pg) })
	}
}

// perUserLimits is TestPerUserLimits on one store.
func perUserLimits(t *testing.T, pg bool) {
	u := newUsersServerOf(t, pg, apptest.Options{}, map[string]string{
		"chat/agent.md": "You chat.",
		"dawn.yaml":     "limits:\n  per_user:\n    threads: 3\n    crons: 2\n    store_items: 2\n    queued_runs: 2\n    connections: 2\n",
	})
	refused := func(what, user, method, path, body string) {
		t.Helper()
		status, raw := u.call(t, user, method, path, body, nil)
		if status != http.StatusTooManyRequests || !strings.Contains(raw, "quota_exceeded") || !strings.Contains(raw, "limits.per_user."+what) {
			t.Fatalf("%s over her %s: %d %s, want 429 quota_exceeded naming limits.per_user.%s", user, what, status, raw, what)
		}
	}
	ok := func(user, method, path, body string) {
		t.Helper()
		if status, raw := u.call(t, user, method, path, body, nil); status >= 300 {
			t.Fatalf("%s %s %s: %d %s", user, method, path, status, raw)
		}
	}
	for _, user := range []string{"ann", "bob"} {
		for i := range 3 {
			ok(user, "POST", "/threads", fmt.Sprintf(`{"thread_id":"%s-%d"}`, user, i))
		}
	}
	refused("threads", "ann", "POST", "/threads", `{"thread_id":"ann-3"}`)
	refused("threads", "ann", "POST", "/threads/ann-new/runs/wait", multitaskBodyOn("/chat", "hi", nil))
	if status, _ := u.call(t, "service", "GET", "/threads/ann-new", "", nil); status != http.StatusNotFound {
		t.Errorf("a run refused over the thread limit left its thread: %d", status)
	}
	ok("bob", "POST", "/threads/bob-0/runs/wait", multitaskBodyOn("/chat", "hi", nil))

	cron := `{"assistant_id":"chat","schedule":"0 0 1 1 *","input":{"messages":[{"role":"user","content":"tick"}]}}`
	ok("ann", "POST", "/runs/crons", cron)
	ok("ann", "POST", "/runs/crons", cron)
	refused("crons", "ann", "POST", "/runs/crons", cron)
	ok("bob", "POST", "/runs/crons", cron)

	item := func(key string) string {
		return `{"namespace":["notes"],"key":"` + key + `","value":{"v":1}}`
	}
	ok("ann", "PUT", "/store/items", item("a"))
	ok("ann", "PUT", "/store/items", item("b"))
	ok("ann", "PUT", "/store/items", item("a")) // a change, not one more
	refused("store_items", "ann", "PUT", "/store/items", item("c"))
	ok("bob", "PUT", "/store/items", item("c"))

	// Two streams of ann's held open (delayed runs, which answer
	// at once and keep the connection): her third request is
	// refused, bob's goes through.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 2 {
		openStream(ctx, t, u, "ann", fmt.Sprintf("/threads/ann-%d/runs/stream", i), multitaskBodyOn("/chat", "later", map[string]any{"after_seconds": 3600}))
	}
	refused("connections", "ann", "GET", "/threads/ann-2", "")
	ok("bob", "GET", "/threads/bob-2", "")
	cancel()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if status, _ := u.call(t, "ann", "GET", "/threads/ann-2", "", nil); status == http.StatusOK {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("ann's closed streams still count after 10 s: %d", status)
		}
	}

	// Those two runs wait in the queue: a third of ann's is one
	// queued run too many.
	later := strings.Replace(delayedLG(""), `"after_seconds":0.2`, `"after_seconds":3600`, 1)
	refused("queued_runs", "ann", "POST", "/threads/ann-2/runs", later)
	ok("bob", "POST", "/threads/bob-1/runs", later)
	ok("bob", "POST", "/threads/bob-2/runs", later)
}

// openStream POSTs body to a stream endpoint as user and leaves the
// stream open until ctx ends.
func openStream(ctx context.Context, t *testing.T, u *usersServer, user, path, body string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", u.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+u.tokens[user])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream %s: %d", path, resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
}
