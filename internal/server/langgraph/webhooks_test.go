package langgraph_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/webhook"
	"github.com/dawn-go/dawn/internal/webhook/webhooktest"
)

// serveHooks serves an app whose /ops route must have each release call
// approved and whose /chat route just answers, sending webhooks with s.
func serveHooks(t *testing.T, model *dawntest.ScriptedModel, s *webhook.Sender) string {
	t.Helper()
	dir := writeApp(t, map[string]string{
		"ops/agent.md":  "---\napprove: [release]\n---\nYou release.",
		"chat/agent.md": "You chat.",
	})
	r := &releases{}
	h := apptest.New(t, dir, model, apptest.Options{Tools: []capabilities.AppTool{r.tool()}, Webhooks: s})
	return h.Serve(t)
}

// lgRunID reads the run_id of a run object answer.
func lgRunID(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var run struct {
		RunID string `json:"run_id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &run) != nil || run.RunID == "" {
		t.Fatalf("not a run: %d %s", resp.StatusCode, data)
	}
	return run.RunID
}

// TestLangGraphWebhookPostsOncePerRun: a background run (POST
// /threads/:id/runs) and a runs/wait with a webhook are each POSTed to it
// exactly once, signed, with the run's id, thread, status and values.
func TestLangGraphWebhookPostsOncePerRun(t *testing.T) {
	rcv := webhooktest.NewReceiver(t)
	url := serveHooks(t, dawntest.Script().Reply("Hi there.").Reply("Hello again."), webhooktest.Sender(t, nil))
	post(t, url+"/threads", `{"thread_id":"h1"}`).Body.Close()
	runID := lgRunID(t, post(t, url+"/threads/h1/runs", lgBody("/chat", "hello", map[string]any{"webhook": rcv.URL})))
	posts := rcv.Wait(t, 1)
	p := posts[0]
	if len(posts) != 1 || !p.Signed || p.Payload.RunID != runID || p.Payload.ThreadID != "h1" || p.Payload.AssistantID != "/chat" || p.Payload.Status != "success" || !strings.Contains(string(p.Payload.Values), "Hi there.") {
		t.Fatalf("%d posts; first: %s", len(posts), p.Body)
	}
	wait := post(t, url+"/threads/h1/runs/wait", lgBody("/chat", "again", map[string]any{"webhook": rcv.URL}))
	wait.Body.Close()
	if wait.StatusCode != http.StatusOK {
		t.Fatalf("runs/wait: %d", wait.StatusCode)
	}
	if posts = rcv.Wait(t, 2); len(posts) != 2 || !posts[1].Signed || posts[1].Payload.RunID == runID || !strings.Contains(string(posts[1].Payload.Values), "Hello again.") {
		t.Fatalf("runs/wait posts: %d, last %s", len(posts), posts[len(posts)-1].Body)
	}
}

// TestLangGraphWebhookRetriesAfter500: the POST is sent again after the
// receiver answers 500, and recorded as delivered.
func TestLangGraphWebhookRetriesAfter500(t *testing.T) {
	rcv := webhooktest.NewReceiver(t, http.StatusInternalServerError)
	s := webhooktest.Sender(t, nil)
	url := serveHooks(t, dawntest.Script().Reply("Done."), s)
	resp := post(t, url+"/threads/h2/runs/stream", lgBody("/chat", "hello", map[string]any{"webhook": rcv.URL, "if_not_exists": "create"}))
	readLG(t, resp)
	posts := rcv.Wait(t, 2)
	if len(posts) != 2 || posts[1].Attempt != "2" || !posts[1].Signed {
		t.Fatalf("posts: %+v", posts)
	}
	if d := webhooktest.WaitDelivery(t, s, posts[1].Payload.RunID); d.Status != webhook.Delivered || d.Attempts != 2 {
		t.Fatalf("delivery: %+v", d)
	}
}

// TestLangGraphWebhookParkedRun: a run that parks for approval is POSTed
// with status interrupted and its interrupts; the run its command resumes
// posts its own end to its own webhook.
func TestLangGraphWebhookParkedRun(t *testing.T) {
	rcv := webhooktest.NewReceiver(t)
	url := serveHooks(t, dawntest.Script().CallTool("release", map[string]string{"version": "1.4.2"}).Reply("Released."), webhooktest.Sender(t, nil))
	post(t, url+"/threads", `{"thread_id":"h3"}`).Body.Close()
	readLG(t, post(t, url+"/threads/h3/runs/stream", lgBody("/ops", "ship it", map[string]any{"webhook": rcv.URL})))
	p := rcv.Wait(t, 1)[0]
	if !p.Signed || p.Payload.Status != "interrupted" || !strings.Contains(string(p.Payload.Interrupts), `"toolName":"release"`) {
		t.Fatalf("parked payload: %s", p.Body)
	}
	var body map[string]any
	_ = json.Unmarshal([]byte(lgResume(`"once"`)), &body)
	body["webhook"] = rcv.URL
	resume, _ := json.Marshal(body)
	readLG(t, post(t, url+"/threads/h3/runs/stream", string(resume)))
	if posts := rcv.Wait(t, 2); len(posts) != 2 || posts[1].Payload.Status != "success" || !strings.Contains(string(posts[1].Payload.Values), "Released.") {
		t.Fatalf("resume posts: %d, last %s", len(posts), posts[len(posts)-1].Body)
	}
}

// TestLangGraphWebhookRefused: a webhook outside the allow-list or not
// http(s) is a 400 naming webhook; a host whose address turns loopback
// between the check and the dial is refused at the socket.
func TestLangGraphWebhookRefused(t *testing.T) {
	rcv := webhooktest.NewReceiver(t)
	model := dawntest.Script().Reply("Done.")
	s := webhooktest.Sender(t, func(c *webhook.Config) { c.Allow, c.Attempts, c.Lookup = nil, 1, webhooktest.Rebinding() })
	url := serveHooks(t, model, s)
	post(t, url+"/threads", `{"thread_id":"h4"}`).Body.Close()
	for _, hook := range []string{rcv.URL, "file:///etc/passwd", "http://192.168.1.1/hook"} {
		if kind := errorKind(t, post(t, url+"/threads/h4/runs/stream", lgBody("/chat", "hello", map[string]any{"webhook": hook})), http.StatusBadRequest); !strings.Contains(kind, ": webhook") {
			t.Fatalf("%s: %s", hook, kind)
		}
	}
	if model.Calls() != 0 {
		t.Fatal("a refused request ran")
	}
	hook := strings.Replace(rcv.URL, "127.0.0.1", "hooks.example", 1)
	runID := lgRunID(t, post(t, url+"/threads/h4/runs", lgBody("/chat", "hello", map[string]any{"webhook": hook})))
	if d := webhooktest.WaitDelivery(t, s, runID); d.Status != webhook.Failed || !strings.Contains(d.Error, "refused") || len(rcv.Posts()) != 0 {
		t.Fatalf("delivery %+v, posts %d", d, len(rcv.Posts()))
	}
}
