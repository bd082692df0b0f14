//go:build unix

package reliability

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/webhook"
	"github.com/dawn-go/dawn/internal/webhook/webhooktest"
)

// webhookApp is an app whose /chat route answers with the offline model
// and whose server sends webhooks, signed with webhooktest.Secret, to
// loopback receivers, retrying after 3s: time enough to kill the server
// between an attempt and the next.
func webhookApp(t *testing.T) (dir string, env []string) {
	dir = writeApp(t, map[string]string{
		"dawn.yaml":     "webhooks:\n  secret_env: DAWN_WEBHOOK_SECRET\n  allow: [127.0.0.1]\n  timeout: 5s\n  attempts: 4\n  backoff: 3s\n",
		"chat/agent.md": "---\ndescription: Chats.\n---\nAnswer briefly.\n",
	})
	return dir, []string{"DAWN_WEBHOOK_SECRET=" + webhooktest.Secret}
}

// runWithWebhook runs /chat on thread with a webhook to rcv through c,
// waits for its first POST and returns the run's id it names.
func runWithWebhook(t *testing.T, c *client, thread string, rcv *webhooktest.Receiver) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"route": "/chat", "webhook": rcv.URL,
		"input": map[string]any{"messages": []map[string]string{{"role": "user", "content": "hello"}}}})
	r := c.must(t, http.MethodPost, "/threads/"+thread+"/runs/wait", body)
	if r.status != http.StatusOK {
		t.Fatalf("runs/wait = %d %s", r.status, r.body)
	}
	posts := rcv.Wait(t, 1)
	if len(posts) != 1 || posts[0].Payload.ThreadID != thread || posts[0].Payload.RunID == "" {
		t.Fatalf("the receiver got %d POSTs for one run, the first %s", len(posts), posts[0].Body)
	}
	return posts[0].Payload.RunID
}

// waitWebhook asks c for the webhook record of run until ok accepts it,
// for up to 20 seconds, and returns the last one read.
func waitWebhook(t *testing.T, c *client, thread, runID string, ok func(webhook.Delivery) bool) webhook.Delivery {
	t.Helper()
	var d webhook.Delivery
	var last reply
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		last = c.must(t, http.MethodGet, "/threads/"+thread+"/runs/"+runID+"/webhook", nil)
		d = webhook.Delivery{}
		if last.status == http.StatusOK && json.Unmarshal(last.body, &d) == nil && ok(d) {
			return d
		}
	}
	t.Fatalf("the webhook record of run %s never became what the test waits for: last answer %d %s", runID, last.status, last.body)
	return d
}

// attempted is a record after one failed attempt, with the next to come.
func attempted(d webhook.Delivery) bool { return d.Status == webhook.Delivering && d.Attempts == 1 }

// delivered is a record of a delivery that succeeded.
func delivered(d webhook.Delivery) bool { return d.Status == webhook.Delivered }

// checkRedelivered checks that the receiver got the run's payload twice,
// signed, as attempts 1 and 2, and that the record says so.
func checkRedelivered(t *testing.T, rcv *webhooktest.Receiver, d webhook.Delivery, runID, logs string) {
	t.Helper()
	posts := rcv.Wait(t, 2)
	if len(posts) != 2 {
		t.Fatalf("the receiver got %d POSTs, want 2 (one 503, one delivered)\n%s", len(posts), logs)
	}
	for i, p := range posts {
		if !p.Signed || p.Payload.RunID != runID || p.Payload.Status != "success" || p.Attempt != []string{"1", "2"}[i] {
			t.Errorf("POST %d: signed %v, attempt %s, body %s", i+1, p.Signed, p.Attempt, p.Body)
		}
	}
	if d.RunID != runID || d.Attempts != 2 || d.Code != http.StatusOK {
		t.Errorf("record %+v, want delivered on attempt 2 with code 200", d)
	}
}

// TestWebhookSurvivesKill: a run whose webhook receiver first answers
// 503 ends; the server is killed with SIGKILL before the retry; a new
// server on the same SQLite file sends the delivery, and its record says
// delivered, on the second attempt.
func TestWebhookSurvivesKill(t *testing.T) {
	dir, env := webhookApp(t)
	env = append(env, "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))
	rcv := webhooktest.NewReceiver(t, http.StatusServiceUnavailable)
	first := startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	c := newClient(first.url)
	defer c.close()
	runID := runWithWebhook(t, c, "w1", rcv)
	waitWebhook(t, c, "w1", runID, attempted)
	first.kill()
	if n := len(rcv.Posts()); n != 1 {
		t.Fatalf("the receiver got %d POSTs before the kill, want 1", n)
	}

	second := startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	c2 := newClient(second.url)
	defer c2.close()
	d := waitWebhook(t, c2, "w1", runID, delivered)
	checkRedelivered(t, rcv, d, runID, second.logs.String())
}

// TestWebhookOnReplicas: on two replicas sharing Postgres, the webhook
// record of a run is read the same from the replica that did not run it;
// and when the replica that ran it is killed before its retry, the other
// sends the delivery.
func TestWebhookOnReplicas(t *testing.T) {
	dsn := pgtest.Database(t)
	dir, env := webhookApp(t)
	reps := startReplicas(t, 2, dir, dsn, env)
	a, b := newClient(reps[0].url), newClient(reps[1].url)
	defer a.close()
	defer b.close()

	ok := webhooktest.NewReceiver(t)
	runID := runWithWebhook(t, a, "r1", ok)
	d := waitWebhook(t, b, "r1", runID, delivered)
	if d.Attempts != 1 || d.Code != http.StatusOK || d.ThreadID != "r1" || len(ok.Posts()) != 1 {
		t.Fatalf("the other replica's record: %+v, posts %d", d, len(ok.Posts()))
	}

	rcv := webhooktest.NewReceiver(t, http.StatusServiceUnavailable)
	runID = runWithWebhook(t, a, "r2", rcv)
	waitWebhook(t, b, "r2", runID, attempted)
	reps[0].kill()
	d = waitWebhook(t, b, "r2", runID, delivered)
	checkRedelivered(t, rcv, d, runID, reps[1].logs.String())
}
