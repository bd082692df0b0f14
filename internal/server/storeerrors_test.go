package server_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/stream"
)

// storeOutageReply is one answer while the store's database is cut off.
type storeOutageReply struct {
	name   string
	status int
	retry  string
	body   string
}

// leaks returns what in body names the database: its user, name, host or
// port, or the driver's words.
func leaks(body string, dsn string) []string {
	u, _ := url.Parse(dsn)
	words := []string{"postgres", "user=", "database=", u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), "connection refused", "failed to connect"}
	var found []string
	for _, w := range words {
		if w != "" && strings.Contains(strings.ToLower(body), strings.ToLower(w)) {
			found = append(found, w)
		}
	}
	return found
}

// TestStoreOutageAnswers503: with the link to the Postgres database cut,
// every surface answers 503 store_unavailable with Retry-After, and no
// answer, error event or run result names the database's user, name, host
// or port. A run that was in flight ends with an error that says the store
// is unavailable, its thread's next request is a 503 too, and once the link
// is back the thread takes runs again.
func TestStoreOutageAnswers503(t *testing.T) {
	db := pgtest.Database(t)
	proxy, dsn := pgtest.NewProxy(t, db)
	gate, open := newGate()
	defer open()
	model := dawntest.Script().Wait(gate).Reply("held").Reply("after")
	h := apptest.New(t, supportApp(t), model, apptest.Options{StorePath: dsn})
	base := h.Serve(t)
	t.Cleanup(proxy.Restore) // so that the store closes cleanly

	// A run in flight, inside its model call, when the link goes.
	held := make(chan []stream.Event, 1)
	go func() { held <- readSSE(t, post(t, base+"/threads/held/runs/stream", runBody("/plain", "hi"))) }()
	waitFor(t, func() bool { return model.Calls() >= 1 })
	proxy.Cut()
	open()
	events := <-held
	done := events[len(events)-1]
	if done.Type != stream.TypeDone || !strings.Contains(string(done.Data), "the store is unavailable") {
		t.Errorf("the held run ended with %s %s, want done with an error saying the store is unavailable", done.Type, done.Data)
	}
	if l := leaks(string(done.Data), db); len(l) > 0 {
		t.Errorf("the held run's done event names the database (%v): %s", l, done.Data)
	}

	lgRun := `{"assistant_id":"/plain","input":{"messages":[{"role":"user","content":"hi"}]}}`
	requests := []struct {
		name, method, path, body string
	}{
		{"create thread", http.MethodPost, "/threads", `{"metadata":{}}`},
		{"get thread", http.MethodGet, "/threads/held", ""},
		{"state", http.MethodGet, "/threads/held/state", ""},
		{"runs", http.MethodGet, "/threads/held/runs", ""},
		{"held thread's next run", http.MethodPost, "/threads/held/runs/wait", runBody("/plain", "again")},
		{"new run, wait", http.MethodPost, "/threads/fresh/runs/wait", runBody("/plain", "hi")},
		{"new run, stream", http.MethodPost, "/threads/fresh/runs/stream", runBody("/plain", "hi")},
		{"rejoin", http.MethodGet, "/threads/held/runs/some-run/stream", ""},
		{"langgraph search", http.MethodPost, "/threads/search", `{}`},
		{"langgraph run", http.MethodPost, "/threads/lg/runs/wait", lgRun},
		{"langgraph stream", http.MethodPost, "/threads/lg/runs/stream", lgRun},
		{"agui", http.MethodPost, "/agui/plain", `{"threadId":"ag","runId":"r1","messages":[{"id":"m1","role":"user","content":"hi"}],"state":{},"tools":[],"context":[],"forwardedProps":{}}`},
	}
	for _, rq := range requests {
		r := send(t, base, rq.method, rq.path, rq.body)
		if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, `"store_unavailable"`) || r.retry == "" {
			t.Errorf("%s (%s %s) with the store cut off = %d %s (Retry-After %q), want 503 store_unavailable with Retry-After",
				rq.name, rq.method, rq.path, r.status, r.body, r.retry)
		}
		if l := leaks(r.body, db); len(l) > 0 {
			t.Errorf("%s: the answer names the database (%v): %s", rq.name, l, r.body)
		}
	}

	proxy.Restore()
	waitFor(t, func() bool { return send(t, base, http.MethodGet, "/threads/held", "").status == http.StatusOK })
	waitFor(t, func() bool {
		return send(t, base, http.MethodPost, "/threads/held/runs/wait", runBody("/plain", "back")).status == http.StatusOK
	})
}

// send makes one request and reads its answer.
func send(t *testing.T, base, method, path, body string) storeOutageReply {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return storeOutageReply{name: path, status: resp.StatusCode, retry: resp.Header.Get("Retry-After"), body: string(data)}
}
