//go:build unix

package reliability

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// TestCronThreadDeletedAfterCrash: the new thread of a cron's tick (no
// thread_id, on_run_completed "delete") is deleted once its run is over
// also when the server that ran it is killed with SIGKILL mid-run, by
// another server's sweep; a plain thread whose run the same crash cut off
// is kept. On SQLite (the next server on the file) and on Postgres (a
// replica that outlives the killed one).
func TestCronThreadDeletedAfterCrash(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		store := filepath.Join(t.TempDir(), "dawn.db")
		checkCronThreadSwept(t, []string{"DAWN_STORE=" + store}, false)
	})
	t.Run("postgres", func(t *testing.T) {
		checkCronThreadSwept(t, []string{"DAWN_STORE=" + pgtest.Database(t), "DAWN_STORE_LEASE=" + replicaLease}, true)
	})
}

// checkCronThreadSwept starts a server with storeEnv, fires a cron's tick
// and a plain run into a model that holds them, kills the server, and
// checks from a second server (started before the kill when together,
// else after) that the cron's thread goes and the plain one stays.
func checkCronThreadSwept(t *testing.T, storeEnv []string, together bool) {
	model, modelURL := newHeldModel(t)
	dir := writeApp(t, map[string]string{
		"ticker/agent.md": "---\ndescription: Answers each tick.\nmodel: openai:gpt-held\n---\nAnswer.\n",
	})
	env := append([]string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + modelURL, "DAWN_CRON_SECONDS=1", "DAWN_CRON_INTERVAL=100ms",
		"DAWN_THREAD_SWEEP_INTERVAL=200ms"}, storeEnv...)
	args := []string{"start", "--app", dir, "--host", "127.0.0.1", "--port", "0"}
	first := startDawn(t, env, args...)
	var second *process
	c := newClient(first.url)
	t.Cleanup(c.close)

	// A plain run on a thread of its own, held in its model call.
	r := c.must(t, http.MethodPost, "/threads", []byte(`{"thread_id":"plain-thread"}`))
	if r.status != http.StatusOK {
		t.Fatalf("POST /threads = %d %s", r.status, r.body)
	}
	r = c.must(t, http.MethodPost, "/threads/plain-thread/runs", []byte(`{"assistant_id":"/ticker","input":{"messages":[{"type":"human","content":"plain"}]}}`))
	if r.status != http.StatusOK {
		t.Fatalf("POST /threads/plain-thread/runs = %d %s", r.status, r.body)
	}
	waitModelArrival(t, model, first)

	// A cron without a thread: its first tick's run is held too; the cron
	// is then deleted so that no later tick makes another thread.
	r = c.must(t, http.MethodPost, "/runs/crons", []byte(`{"assistant_id":"/ticker","schedule":"* * * * * *",
		"input":{"messages":[{"type":"human","content":"tick"}]}}`))
	if r.status != http.StatusOK {
		t.Fatalf("POST /runs/crons = %d %s", r.status, r.body)
	}
	var cron struct {
		CronID string `json:"cron_id"`
	}
	if err := json.Unmarshal(r.body, &cron); err != nil || cron.CronID == "" {
		t.Fatalf("cron answer %s: %v", r.body, err)
	}
	waitModelArrival(t, model, first)
	if r := c.must(t, http.MethodDelete, "/runs/crons/"+cron.CronID, nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE cron = %d %s", r.status, r.body)
	}
	cronThreads := busyThreadsBut(t, c, "plain-thread")
	if len(cronThreads) == 0 {
		t.Fatalf("no busy thread of the cron's tick; server logs:\n%s", first.logs)
	}
	if together {
		// The second server starts once the cron is gone: its scheduler
		// would otherwise fire a tick of its own, whose thread is busy on
		// a live server and rightly kept.
		second = startDawn(t, env, args...)
	}

	first.kill()
	if second == nil {
		second = startDawn(t, env, args...)
	}
	c2 := newClient(second.url)
	t.Cleanup(c2.close)
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range cronThreads {
		for {
			r := c2.must(t, http.MethodGet, "/threads/"+id, nil)
			if r.status == http.StatusNotFound {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cron's thread %s is still there 30s after its server was killed: %d %s\nsecond server's logs:\n%s", id, r.status, r.body, second.logs)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var plain struct {
		Status string `json:"status"`
	}
	c2.getJSON(t, "/threads/plain-thread", &plain)
	if plain.Status != "interrupted" {
		t.Errorf("the plain thread cut off by the crash is %q, want it kept as interrupted", plain.Status)
	}
}

// waitModelArrival waits for one more request to reach the held model.
func waitModelArrival(t *testing.T, m *heldModel, p *process) {
	t.Helper()
	select {
	case <-m.arrived:
	case <-time.After(20 * time.Second):
		t.Fatalf("no model request within 20s; server logs:\n%s", p.logs)
	}
}

// busyThreadsBut lists the busy threads other than except.
func busyThreadsBut(t *testing.T, c *client, except string) []string {
	t.Helper()
	r := c.must(t, http.MethodPost, "/threads/search", []byte(`{"status":"busy","limit":100}`))
	if r.status != http.StatusOK {
		t.Fatalf("POST /threads/search = %d %s", r.status, r.body)
	}
	var found []struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal(r.body, &found); err != nil {
		t.Fatalf("threads search %s: %v", r.body, err)
	}
	var out []string
	for _, th := range found {
		if th.ThreadID != except {
			out = append(out, th.ThreadID)
		}
	}
	return out
}
