package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/webhook"
	"github.com/dawn-go/dawn/internal/webhook/webhooktest"
)

// hookApp serves an app whose /ops route must have each release call
// approved and whose /chat route just answers, sending webhooks with s.
func hookApp(t *testing.T, model *dawntest.ScriptedModel, s *webhook.Sender) string {
	t.Helper()
	dir := writeApp(t, map[string]string{
		"ops/agent.md":  "---\napprove: [release]\n---\nYou release.",
		"chat/agent.md": "You chat.",
	})
	release := capabilities.AppTool{Tool: capabilities.Func("release", "Release a version.", func(_ context.Context, in struct {
		Version string `json:"version"`
	}) (string, error) {
		return "released " + in.Version, nil
	})}
	h := apptest.New(t, dir, model, apptest.Options{Tools: []capabilities.AppTool{release}, Webhooks: s})
	return h.Serve(t)
}

// hookBody is a Dawn run request with a webhook.
func hookBody(route, message, hook string) string {
	b, _ := json.Marshal(map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": message}}}, "webhook": hook})
	return string(b)
}

// TestWebhookPostsOncePerRun: a run started with a webhook, on runs/stream
// and on runs/wait, is POSTed to it exactly once when it ends, signed,
// with its id, thread, status and final values.
func TestWebhookPostsOncePerRun(t *testing.T) {
	rcv := webhooktest.NewReceiver(t)
	url := hookApp(t, dawntest.Script().Reply("Hi there.").Reply("Hello again."), webhooktest.Sender(t, nil))
	resp := post(t, url+"/threads/w1/runs/stream", hookBody("/chat", "hello", rcv.URL))
	runID := resp.Header.Get("Dawn-Run-Id")
	readSSE(t, resp)
	posts := rcv.Wait(t, 1)
	if len(posts) != 1 {
		t.Fatalf("got %d POSTs for one run, want 1", len(posts))
	}
	p := posts[0]
	if !p.Signed || !strings.HasPrefix(p.Signature, "sha256=") || p.Attempt != "1" {
		t.Fatalf("POST not signed with the secret: signature %q attempt %q", p.Signature, p.Attempt)
	}
	if p.Payload.RunID != runID || p.Payload.ThreadID != "w1" || p.Payload.AssistantID != "/chat" || p.Payload.Status != "success" || !strings.Contains(string(p.Payload.Values), "Hi there.") {
		t.Fatalf("payload: %s", p.Body)
	}

	wait := post(t, url+"/threads/w1/runs/wait", hookBody("/chat", "again", rcv.URL))
	wait.Body.Close()
	if wait.StatusCode != http.StatusOK {
		t.Fatalf("runs/wait: %d", wait.StatusCode)
	}
	posts = rcv.Wait(t, 2)
	if len(posts) != 2 || !posts[1].Signed || posts[1].Payload.RunID == runID || !strings.Contains(string(posts[1].Payload.Output), "Hello again.") {
		t.Fatalf("runs/wait posts: %d, last %s", len(posts), posts[len(posts)-1].Body)
	}
}

// TestWebhookRetriesAfter500: a receiver that answers 500 gets the POST
// again, and the delivery is recorded as delivered on the second try.
func TestWebhookRetriesAfter500(t *testing.T) {
	rcv := webhooktest.NewReceiver(t, http.StatusInternalServerError)
	s := webhooktest.Sender(t, nil)
	url := hookApp(t, dawntest.Script().Reply("Done."), s)
	resp := post(t, url+"/threads/w2/runs/stream", hookBody("/chat", "hello", rcv.URL))
	runID := resp.Header.Get("Dawn-Run-Id")
	readSSE(t, resp)
	posts := rcv.Wait(t, 2)
	if len(posts) != 2 || posts[0].Attempt != "1" || posts[1].Attempt != "2" || !posts[1].Signed || posts[1].Payload.RunID != runID {
		t.Fatalf("posts: %+v", posts)
	}
	if d := webhooktest.WaitDelivery(t, s, runID); d.Status != webhook.Delivered || d.Attempts != 2 || d.Code != 200 {
		t.Fatalf("delivery: %+v", d)
	}
	var d webhook.Delivery
	if code := getJSON(t, url+"/threads/w2/runs/"+runID+"/webhook", &d); code != http.StatusOK || d.Status != webhook.Delivered || d.Attempts != 2 || d.RunID != runID {
		t.Fatalf("GET webhook: %d %+v", code, d)
	}
	var e apiErr
	if code := getJSON(t, url+"/threads/other/runs/"+runID+"/webhook", &e); code != http.StatusNotFound || e.Error.Kind != "webhook_not_found" {
		t.Fatalf("GET webhook on another thread: %d %+v", code, e)
	}
}

// TestWebhookParkedRunCarriesInterrupts: a run that parks for approval is
// POSTed with status interrupted and the interrupts it waits on; the
// resume's own webhook gets the run that goes on.
func TestWebhookParkedRunCarriesInterrupts(t *testing.T) {
	rcv := webhooktest.NewReceiver(t)
	url := hookApp(t, dawntest.Script().CallTool("release", map[string]string{"version": "1.4.2"}).Reply("Released."), webhooktest.Sender(t, nil))
	readSSE(t, post(t, url+"/threads/w3/runs/stream", hookBody("/ops", "ship it", rcv.URL)))
	p := rcv.Wait(t, 1)[0]
	var interrupts []struct {
		ID     string `json:"interruptId"`
		Detail struct {
			ToolName string `json:"toolName"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(p.Payload.Interrupts, &interrupts); err != nil || !p.Signed || p.Payload.Status != "interrupted" || len(interrupts) != 1 || interrupts[0].ID == "" || interrupts[0].Detail.ToolName != "release" {
		t.Fatalf("parked payload (%v): %s", err, p.Body)
	}
	resume, _ := json.Marshal(map[string]any{"route": "/ops", "resume": []map[string]any{{"interruptId": interrupts[0].ID, "status": "resolved", "payload": "once"}}, "webhook": rcv.URL})
	readSSE(t, post(t, url+"/threads/w3/resume", string(resume)))
	if posts := rcv.Wait(t, 2); len(posts) != 2 || posts[1].Payload.Status != "success" || !strings.Contains(string(posts[1].Payload.Values), "Released.") {
		t.Fatalf("resume posts: %d, last %s", len(posts), posts[len(posts)-1].Body)
	}
}

// TestWebhookRefusedURLs: a webhook that is not http(s), or whose host is
// a loopback address the allow-list does not name, is refused with 400
// naming webhook before any run starts, and nothing is POSTed.
func TestWebhookRefusedURLs(t *testing.T) {
	rcv := webhooktest.NewReceiver(t)
	model := dawntest.Script().Reply("never")
	url := hookApp(t, model, webhooktest.Sender(t, func(c *webhook.Config) { c.Allow = nil }))
	for _, hook := range []string{rcv.URL, "ftp://example.com/hook", "http://[::1]/hook", "http://169.254.169.254/latest", "http://10.1.2.3/hook"} {
		resp := post(t, url+"/threads/w4/runs/stream", hookBody("/chat", "hello", hook))
		e := decodeErr(t, resp)
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(e.Error.Message, "webhook") {
			t.Fatalf("%s: %d %+v", hook, resp.StatusCode, e)
		}
	}
	if model.Calls() != 0 || len(rcv.Posts()) != 0 {
		t.Fatalf("a refused request ran (%d model calls) or posted (%d)", model.Calls(), len(rcv.Posts()))
	}
}

// TestWebhookRefusedAtDial: a host that resolved to a public address when
// the request came and to loopback when the POST dials is refused at the
// socket: nothing reaches the receiver and the delivery is recorded
// failed, while the run itself succeeds.
func TestWebhookRefusedAtDial(t *testing.T) {
	rcv := webhooktest.NewReceiver(t)
	s := webhooktest.Sender(t, func(c *webhook.Config) { c.Allow, c.Attempts, c.Lookup = nil, 2, webhooktest.Rebinding() })
	url := hookApp(t, dawntest.Script().Reply("Done."), s)
	hook := strings.Replace(rcv.URL, "127.0.0.1", "hooks.example", 1)
	resp := post(t, url+"/threads/w5/runs/stream", hookBody("/chat", "hello", hook))
	runID := resp.Header.Get("Dawn-Run-Id")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the request was refused: %d", resp.StatusCode)
	}
	readSSE(t, resp)
	d := webhooktest.WaitDelivery(t, s, runID)
	if d.Status != webhook.Failed || d.Attempts != 2 || !strings.Contains(d.Error, "refused") || len(rcv.Posts()) != 0 {
		t.Fatalf("delivery %+v, posts %d", d, len(rcv.Posts()))
	}
}

// TestWebhookForRunsThatEndWithoutStarting: a queued run and a delayed
// run that asked for a webhook, and end without starting (one cancelled
// by runs.cancel, the other by a run with multitask_strategy "interrupt",
// which cancels the queue), are each POSTed once with status cancelled,
// and their delivery is readable as any run's.
func TestWebhookForRunsThatEndWithoutStarting(t *testing.T) {
	rcv := webhooktest.NewReceiver(t)
	gate := make(chan struct{})
	defer close(gate)
	model := dawntest.Script().Wait(gate).Then(echoTurn).Repeat()
	s := webhooktest.Sender(t, nil)
	url := hookApp(t, model, s)
	chat := func(text string, extra map[string]any) string {
		b := map[string]any{"route": "/chat", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": text}}}}
		for k, v := range extra {
			b[k] = v
		}
		data, _ := json.Marshal(b)
		return string(data)
	}
	go func() { readBody(t, post(t, url+"/threads/q/runs/wait", chat("first", nil))) }()
	for model.Calls() == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		readBody(t, post(t, url+"/threads/q/runs/wait", chat("queued", map[string]any{"multitask_strategy": "enqueue", "webhook": rcv.URL})))
	}()
	waitStatuses(t, url, "q", "pending", "running")
	go func() {
		readBody(t, post(t, url+"/threads/q/runs/wait", chat("delayed", map[string]any{"after_seconds": 600, "webhook": rcv.URL})))
	}()
	waitStatuses(t, url, "q", "pending", "pending", "running")
	var runs []struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	getJSON(t, url+"/threads/q/runs", &runs)
	queued, delayed := runs[1].RunID, runs[0].RunID
	resp := post(t, url+"/threads/q/runs/"+queued+"/cancel", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("cancelling the queued run: %d %s", resp.StatusCode, readBody(t, resp))
	}
	resp.Body.Close()
	go func() {
		readBody(t, post(t, url+"/threads/q/runs/wait", chat("now", map[string]any{"multitask_strategy": "interrupt"})))
	}()

	posts := rcv.Wait(t, 2)
	got := map[string]string{}
	for _, p := range posts {
		got[p.Payload.RunID] = p.Payload.Status
		if !p.Signed || p.Payload.ThreadID != "q" || p.Payload.AssistantID != "/chat" {
			t.Errorf("the POST of a run that never started: %s", p.Body)
		}
	}
	if got[queued] != "cancelled" || got[delayed] != "cancelled" || len(posts) != 2 {
		t.Errorf("POSTs by run %v, want the queued run %s and the delayed run %s, each once, cancelled", got, queued, delayed)
	}
	for _, id := range []string{queued, delayed} {
		if d := webhooktest.WaitDelivery(t, s, id); d.Status != webhook.Delivered {
			t.Errorf("the delivery of run %s is %+v, want delivered", id, d)
		}
		var d struct {
			Status string `json:"status"`
		}
		getJSON(t, url+"/threads/q/runs/"+id+"/webhook", &d)
		if d.Status != "delivered" {
			t.Errorf("GET webhook of run %s: %+v, want delivered", id, d)
		}
	}
}
