package a2a_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/server"
	dawna2a "github.com/dawn-go/dawn/internal/server/a2a"
	"github.com/dawn-go/dawn/internal/webhook"
	"github.com/dawn-go/dawn/internal/webhook/webhooktest"
)

// push is one POST a push receiver got.
type push struct {
	token, signature, attempt string
	body                      []byte
}

// pushReceiver is a loopback receiver of push notifications that answers
// its first POSTs with codes, and later ones with 200.
type pushReceiver struct {
	url   string
	mu    sync.Mutex
	codes []int
	got   []push
}

func newPushReceiver(t *testing.T, codes ...int) *pushReceiver {
	r := &pushReceiver{codes: codes}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, push{req.Header.Get(dawna2a.TokenHeader), req.Header.Get(webhook.SignatureHeader), req.Header.Get(webhook.AttemptHeader), body})
		code := http.StatusOK
		if len(r.codes) > 0 {
			code, r.codes = r.codes[0], r.codes[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/push"
	return r
}

// wait waits for n POSTs in all and returns them.
func (r *pushReceiver) wait(t *testing.T, n int) []push {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		got := append([]push(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
	}
	t.Fatalf("the receiver did not get %d push notifications within 10s", n)
	return nil
}

// taskOf checks p is signed, carries token, and holds an A2A task, which
// it returns.
func taskOf(t *testing.T, p push, token string) *a2a.Task {
	t.Helper()
	if p.token != token {
		t.Errorf("%s = %q, want %q", dawna2a.TokenHeader, p.token, token)
	}
	if !webhook.Verify([]byte(webhooktest.Secret), p.body, p.signature) {
		t.Errorf("push not signed with the webhook secret: %q", p.signature)
	}
	var task a2a.Task
	if err := json.Unmarshal(p.body, &task); err != nil {
		t.Fatalf("push body is no task: %v: %s", err, p.body)
	}
	return &task
}

// TestPushNotifications: a message with a push notification config has
// its task POSTed to the config's URL, signed and with its token, when it
// waits for input (retried after a 500) and, on the answer, when it
// completes with its artifacts; the config is the caller's alone, and a
// private URL is refused.
func TestPushNotifications(t *testing.T) {
	dir := a2aApp(t)
	db := filepath.Join(t.TempDir(), "dawn.db")
	a, err := auth.New(t.Context(), auth.Options{Config: auth.Config{JWT: &auth.JWT{SecretEnv: "SECRET", Audience: "dawn"}}, APIKey: "svc", Env: func(string) string { return secret }})
	if err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, dir, &testModel{}, apptest.Options{Tools: []capabilities.AppTool{release}, StorePath: db, Webhooks: webhooktest.Sender(t, nil)})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: a}))
	t.Cleanup(srv.Close)
	ann, card := client(t, srv.URL, "/ops", "ann")
	bob, _ := client(t, srv.URL, "/ops", "bob")
	if !card.Capabilities.PushNotifications {
		t.Error("the card does not say the agent sends push notifications")
	}
	ctx := t.Context()
	rcv := newPushReceiver(t, http.StatusInternalServerError)

	bad := userText("", "release 1.2")
	bad.Config = &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{URL: "http://10.1.2.3/push"}}
	if _, err := ann.SendMessage(ctx, bad); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("a private push URL: %v, want invalid params", err)
	}

	msg := userText("", "release 1.2")
	msg.Config = &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{ID: "c1", URL: rcv.url, Token: "tok-1"}}
	res, err := ann.SendMessage(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	got := rcv.wait(t, 2)
	if got[0].attempt != "1" || got[1].attempt != "2" {
		t.Errorf("attempts %q, %q: want the push retried after the 500", got[0].attempt, got[1].attempt)
	}
	for _, p := range got[:2] {
		if pt := taskOf(t, p, "tok-1"); pt.ID != task.ID || pt.Status.State != a2a.TaskStateInputRequired || pt.Status.Message == nil {
			t.Fatalf("pushed %+v, want task %s input-required with its question", pt, task.ID)
		}
	}

	if _, err := bob.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another user's push config: %v, want task not found", err)
	}
	cfg, err := ann.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: task.ID})
	if err != nil || cfg.Config.URL != rcv.url || cfg.Config.Token != "tok-1" || cfg.TaskID != task.ID {
		t.Fatalf("get push config = %+v, %v", cfg, err)
	}
	if list, err := ann.ListTaskPushConfig(ctx, &a2a.ListTaskPushConfigParams{TaskID: task.ID}); err != nil || len(list) != 1 {
		t.Errorf("list push configs = %v, %v; want the one", list, err)
	}

	answer := userText(task.ContextID, "once")
	answer.Message.TaskID = task.ID
	if _, err := ann.SendMessage(ctx, answer); err != nil {
		t.Fatal(err)
	}
	got = rcv.wait(t, 3)
	done := taskOf(t, got[2], "tok-1")
	if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || len(done.Artifacts) == 0 || textOf(done.Artifacts[0].Parts) != "Done: release 1.2." {
		t.Fatalf("pushed at the end %+v, want task %s completed with its answer artifact", done, task.ID)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.wait(t, 3)); n != 3 {
		t.Errorf("the receiver got %d pushes, want 3 (one retried)", n)
	}
}
