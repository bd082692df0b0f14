package a2acall_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
)

// agent is a real A2A agent over loopback HTTP (the SDK's server), whose
// executor a test scripts: each Execute runs script with the request.
type agent struct {
	srv    *httptest.Server
	script func(ctx context.Context, rc *a2asrv.RequestContext, w *writer) error
	// cancelled receives each task id tasks/cancel named.
	cancelled chan a2a.TaskID
	// started receives each task id an Execute began.
	started chan a2a.TaskID
	mu      sync.Mutex
	// inputs are the texts and data of the messages the agent got.
	inputs []string
	// auth are the Authorization headers of the JSON-RPC requests.
	auth []string
	// delay holds back a new task's first event.
	delay time.Duration
}

// writer writes a script's events to the task's queue.
type writer struct {
	ctx context.Context
	rc  *a2asrv.RequestContext
	q   eventqueue.Queue
}

func (w *writer) write(ev a2a.Event) error { return w.q.Write(w.ctx, ev) }

// status writes a status update with parts as its message.
func (w *writer) status(state a2a.TaskState, final bool, parts ...a2a.Part) error {
	var msg *a2a.Message
	if len(parts) > 0 {
		msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, w.rc, parts...)
	}
	ev := a2a.NewStatusUpdateEvent(w.rc, state, msg)
	ev.Final = final
	return w.write(ev)
}

// answer writes the answer as an artifact and completes the task.
func (w *writer) answer(text string) error {
	if err := w.write(a2a.NewArtifactEvent(w.rc, a2a.TextPart{Text: text})); err != nil {
		return err
	}
	return w.status(a2a.TaskStateCompleted, true)
}

// plan is a status update's data part carrying a plan, as a Dawn route
// served over A2A streams its plan_update.
func plan(todos ...string) a2a.Part {
	var list []any
	for i, t := range todos {
		status := "pending"
		if i == 0 {
			status = "in_progress"
		}
		list = append(list, map[string]any{"content": t, "status": status})
	}
	return a2a.DataPart{Data: map[string]any{"todos": list}}
}

func newAgent(t *testing.T, script func(ctx context.Context, rc *a2asrv.RequestContext, w *writer) error) *agent {
	t.Helper()
	a := &agent{script: script, cancelled: make(chan a2a.TaskID, 8), started: make(chan a2a.TaskID, 8)}
	mux := http.NewServeMux()
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	card := &a2a.AgentCard{
		Name: "remote", Description: "a scripted remote agent", URL: a.srv.URL + "/rpc",
		PreferredTransport: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0", Version: "1",
		Capabilities: a2a.AgentCapabilities{Streaming: true}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "work", Name: "work", Description: "does the work"}},
	}
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(executor{a}))
	mux.Handle("/rpc", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		rpc.ServeHTTP(w, r)
	}))
	return a
}

// cardURL is the agent's card URL.
func (a *agent) cardURL() string { return a.srv.URL + "/.well-known/agent-card.json" }

func (a *agent) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.inputs...)
}

type executor struct{ a *agent }

func (e executor) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	e.a.mu.Lock()
	for _, p := range rc.Message.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			e.a.inputs = append(e.a.inputs, p.Text)
		case a2a.DataPart:
			e.a.inputs = append(e.a.inputs, fmt.Sprint(p.Data))
		}
	}
	e.a.mu.Unlock()
	w := &writer{ctx: ctx, rc: rc, q: q}
	e.a.started <- rc.TaskID
	if rc.StoredTask == nil {
		time.Sleep(e.a.delay)
		if err := w.write(a2a.NewSubmittedTask(rc, rc.Message)); err != nil {
			return err
		}
	}
	return e.a.script(ctx, rc, w)
}

func (e executor) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	e.a.cancelled <- rc.TaskID
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}
