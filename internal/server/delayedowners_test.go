package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/webhook/webhooktest"
)

// usersServer is a server of the "chat" route for ann and bob (HS256
// JWTs, and the service key), on a SQLite file or on a Postgres database,
// with webhooks and the queue's sweep running as dawn start runs it.
type usersServer struct {
	h      *apptest.Harness
	base   string
	tokens map[string]string
}

func newUsersServer(t *testing.T, postgres bool, opts apptest.Options) *usersServer {
	t.Helper()
	return newUsersServerOf(t, postgres, opts, map[string]string{"chat/agent.md": "You chat."})
}

// newUsersServerOf is newUsersServer of the app files.
func newUsersServerOf(t *testing.T, postgres bool, opts apptest.Options, files map[string]string) *usersServer {
	t.Helper()
	creds := newCredentials(t, "hs256")
	opts.Auth = creds.auth
	opts.StorePath = filepath.Join(t.TempDir(), "dawn.db")
	if postgres {
		opts.StorePath = pgtest.Database(t)
	}
	dir := apptest.WriteApp(t, files)
	h := apptest.New(t, dir, dawntest.Script().Reply("ran").Repeat(), opts)
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Runs.SweepQueue(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &usersServer{h: h, base: srv.URL, tokens: creds.tokens}
}

// call sends method path body as user and decodes a JSON answer into out
// (when not nil); it returns the status and the raw body.
func (u *usersServer) call(t *testing.T, user, method, path, body string, out any) (int, string) {
	t.Helper()
	resp := authed(t, method, u.base+path, u.tokens[user], body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s as %s: %v: %s", method, path, user, err, raw)
		}
	}
	return resp.StatusCode, string(raw)
}

// awaitRun polls a run as user until its status is want, failing the
// test after timeout.
func (u *usersServer) awaitRun(t *testing.T, user, threadID, runID, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		var r struct {
			Status string `json:"status"`
		}
		status, raw := u.call(t, user, "GET", "/threads/"+threadID+"/runs/"+runID, "", &r)
		if status == http.StatusOK && r.Status == want {
			return
		}
		last = fmt.Sprintf("%d %s", status, raw)
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run %s of thread %s as %s: never %s within %v; last answer %s", runID, threadID, user, want, timeout, last)
}

// delayedLG is a LangGraph run request on "chat" that waits a moment.
func delayedLG(extra string) string {
	return `{"assistant_id":"chat","input":{"messages":[{"role":"user","content":"later"}]},"after_seconds":0.2` + extra + `}`
}

// TestDelayedRunsOfOneUserNeverStarveAnother: ann's delayed runs on new
// threads (LangGraph's POST /runs and POST /threads/:id/runs, Dawn's
// runs/wait) start and end as hers; queued runs that can never start (as
// an earlier version left them: a thread that belongs to no one, queued
// for ann) end with an error and their webhook instead of staying queued;
// and however many of them there are, bob's delayed run on his own thread
// starts. Before, ann's requests answered 404 and stayed queued, and the
// sweep, which read the oldest 64 due runs, never reached bob's.
func TestDelayedRunsOfOneUserNeverStarveAnother(t *testing.T) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			rcv := webhooktest.NewReceiver(t)
			u := newUsersServer(t, pg, apptest.Options{Webhooks: webhooktest.Sender(t, nil)})
			const stuck = 70
			stuckIDs := plantStuckRuns(t, u.h.Store, stuck, rcv.URL)
			bobsDelayedRunStarts(t, u)
			for _, r := range annsDelayedRuns(t, u) {
				u.awaitRun(t, "ann", r.ThreadID, r.RunID, "success", 30*time.Second)
			}
			for threadID, runID := range stuckIDs {
				u.awaitRun(t, "service", threadID, runID, "error", 30*time.Second)
			}
			posts := rcv.Wait(t, stuck)
			for _, p := range posts {
				if p.Payload.Status != "error" || !strings.HasPrefix(p.Payload.ThreadID, "old-") {
					t.Errorf("webhook of a run that could not start: %s", p.Body)
				}
			}
			if left, err := u.h.Store.AnyQueued(t.Context()); err != nil || left {
				t.Errorf("runs left queued: %v %v", left, err)
			}
		})
	}
}

// bobsDelayedRunStarts creates a thread of bob's and a delayed run on it,
// which must start and succeed.
func bobsDelayedRunStarts(t *testing.T, u *usersServer) {
	t.Helper()
	var bobThread struct {
		ThreadID string `json:"thread_id"`
	}
	if status, raw := u.call(t, "bob", "POST", "/threads", `{}`, &bobThread); status != http.StatusOK {
		t.Fatalf("bob creates a thread: %d %s", status, raw)
	}
	var bobRun struct {
		RunID string `json:"run_id"`
	}
	if status, raw := u.call(t, "bob", "POST", "/threads/"+bobThread.ThreadID+"/runs", delayedLG(""), &bobRun); status != http.StatusOK {
		t.Fatalf("bob's delayed run: %d %s", status, raw)
	}
	u.awaitRun(t, "bob", bobThread.ThreadID, bobRun.RunID, "success", 15*time.Second)
}

// annRun is a run ann started, as the LangGraph dialect answers it.
type annRun struct {
	RunID    string `json:"run_id"`
	ThreadID string `json:"thread_id"`
}

// annsDelayedRuns sends ann's delayed runs on new threads: stateless
// POST /runs and POST /threads/:id/runs, which must answer 200 (their
// runs are returned), and Dawn's runs/wait, which must answer with the
// run's values.
func annsDelayedRuns(t *testing.T, u *usersServer) []annRun {
	t.Helper()
	var anns []annRun
	for i := range 5 {
		var r annRun
		if status, raw := u.call(t, "ann", "POST", "/runs", delayedLG(`,"on_completion":"keep"`), &r); status != http.StatusOK {
			t.Fatalf("ann's stateless delayed run %d: %d %s", i, status, raw)
		}
		anns = append(anns, r)
		id := fmt.Sprintf("ann-new-%d", i)
		if status, raw := u.call(t, "ann", "POST", "/threads/"+id+"/runs", delayedLG(`,"if_not_exists":"create"`), &r); status != http.StatusOK {
			t.Fatalf("ann's delayed run on new thread %s: %d %s", id, status, raw)
		}
		anns = append(anns, r)
	}
	var values map[string]any
	status, raw := u.call(t, "ann", "POST", "/threads/ann-wait/runs/wait", multitaskBodyOn("/chat", "later", map[string]any{"after_seconds": 0.2}), &values)
	if status != http.StatusOK || !strings.Contains(raw, "ran") {
		t.Fatalf("ann's delayed Dawn runs/wait on a new thread: %d %s", status, raw)
	}
	return anns
}

// plantStuckRuns queues n runs as an earlier version did: each on a new
// thread that belongs to no one, queued for ann, with a webhook. ann may
// not run on such a thread, so none of them can ever start. It returns
// each run's id by thread.
func plantStuckRuns(t *testing.T, st store.Store, n int, hook string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for i := range n {
		threadID := fmt.Sprintf("old-%d", i)
		req := fmt.Sprintf(`{"ThreadID":%q,"Route":"/chat","Messages":[{"role":"user","content":"stuck"}],"Webhook":%q,"identity":{"user":"ann"}}`, threadID, hook)
		q, err := st.EnqueueRun(t.Context(), store.QueuedRun{ID: fmt.Sprintf("stuck-%d", i), ThreadID: threadID, Route: "/chat", Request: json.RawMessage(req)}, 0)
		if err != nil {
			t.Fatal(err)
		}
		ids[threadID] = q.ID
	}
	return ids
}

// multitaskBodyOn is a Dawn run request on route with extra fields.
func multitaskBodyOn(route, text string, extra map[string]any) string {
	b := map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": text}}}}
	for k, v := range extra {
		b[k] = v
	}
	data, _ := json.Marshal(b)
	return string(data)
}
