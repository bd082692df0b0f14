package a2acall_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/a2acall"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// serveLead serves, over loopback HTTP, an app whose /lead route has one
// subagent: remote, the A2A agent a2aYAML names.
func serveLead(t *testing.T, a2aYAML string, model llms.Model) string {
	t.Helper()
	dir := apptest.WriteApp(t, map[string]string{
		"lead/agent.md":                     "You lead.",
		"lead/subagents/remote/a2a.yaml":    a2aYAML,
		"lead/subagents/local/agent.md":     "You help.",
		"lead/subagents/local/ignored.yaml": "not: read",
	})
	return apptest.New(t, dir, model, apptest.Options{}).Serve(t)
}

func delegate(input string) map[string]any {
	return map[string]any{"subagent": "remote", "input": input}
}

// find returns the data of the first event of type typ, or fails t.
func find(t *testing.T, events []stream.Event, typ string) map[string]any {
	t.Helper()
	for _, e := range events {
		if e.Type == typ {
			var data map[string]any
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatalf("%s data %s: %v", typ, e.Data, err)
			}
			return data
		}
	}
	t.Fatalf("no %s event in %s", typ, types(events))
	return nil
}

func types(events []stream.Event) string {
	var s []string
	for _, e := range events {
		s = append(s, e.Type)
	}
	return strings.Join(s, ",")
}

// taskResult is the task call's tool_result: its output text or its error.
func taskResult(t *testing.T, events []stream.Event) (output, errText string) {
	t.Helper()
	for _, e := range events {
		if e.Type != "tool_result" {
			continue
		}
		var r struct {
			Name   string          `json:"name"`
			Output json.RawMessage `json:"output"`
			Error  string          `json:"error"`
		}
		if err := json.Unmarshal(e.Data, &r); err != nil {
			t.Fatal(err)
		}
		if r.Name == "task" {
			_ = json.Unmarshal(r.Output, &output)
			return output, r.Error
		}
	}
	t.Fatalf("no task tool_result in %s", types(events))
	return "", ""
}

// TestRemotePlanAndAnswer: a remote agent's plan reaches the parent's
// stream as subagent.plan_update, its status text as subagent.message, and
// its artifact is the task call's result; the credential named by
// credential_env goes with every request as a bearer token.
func TestRemotePlanAndAnswer(t *testing.T) {
	remote := newAgent(t, func(_ context.Context, rc *a2asrv.RequestContext, w *writer) error {
		if err := w.status(a2a.TaskStateWorking, false, plan("Look it up", "Answer"), a2a.TextPart{Text: "looking it up"}); err != nil {
			return err
		}
		return w.answer("remote says: Paris")
	})
	t.Setenv("REMOTE_TOKEN", "s3cret")
	model := dawntest.Script().CallTool("task", delegate("capital of France?")).Reply("It is Paris.")
	base := serveLead(t, "card: "+remote.cardURL()+"\ncredential_env: REMOTE_TOKEN\n", model)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/p1/runs/stream", apptest.RunBody("/lead", "capital?")))

	start := find(t, events, "subagent.start")
	if start["subagent"] != "remote" || start["route_id"] != remote.cardURL() || start["depth"] != 1.0 {
		t.Errorf("subagent.start = %v", start)
	}
	pl := find(t, events, "subagent.plan_update")
	todos, _ := pl["todos"].([]any)
	if len(todos) != 2 || pl["call_id"] != start["call_id"] || !strings.Contains(fmt.Sprint(todos[0]), "Look it up") {
		t.Errorf("subagent.plan_update = %v; want the remote's two todos under the task call", pl)
	}
	if st := find(t, events, "subagent.status"); st["state"] != "submitted" || st["call_id"] != start["call_id"] {
		t.Errorf("first subagent.status = %v; want the submitted task", st)
	}
	if msg := find(t, events, "subagent.message"); msg["chunk"] != "looking it up" {
		t.Errorf("subagent.message = %v", msg)
	}
	if end := find(t, events, "subagent.end"); end["final_message"] != "remote says: Paris" {
		t.Errorf("subagent.end = %v", end)
	}
	if out, errText := taskResult(t, events); out != "remote says: Paris" || errText != "" {
		t.Errorf("task result %q, error %q", out, errText)
	}
	if done := find(t, events, "done"); !strings.Contains(fmt.Sprint(done), "It is Paris.") {
		t.Errorf("done = %v", done)
	}
	if tools, _ := json.Marshal(model.Tools()[0]); !strings.Contains(string(tools), `"enum":["local","remote"]`) {
		t.Errorf("the model's tools %s; want the task tool naming local and remote", tools)
	}
	if got := remote.got(); len(got) != 1 || got[0] != "capital of France?" {
		t.Errorf("remote got %q; want the task input", got)
	}
	remote.mu.Lock()
	defer remote.mu.Unlock()
	for _, h := range remote.auth {
		if h != "Bearer s3cret" {
			t.Errorf("Authorization = %q; want the credential as a bearer token", h)
		}
	}
}

// TestRemoteQuestionParksParent: a remote agent in input-required parks
// the parent thread with an interrupt a person answers through resume;
// the answer goes to the same remote task, which completes, and the
// parent goes on with its result.
func TestRemoteQuestionParksParent(t *testing.T) {
	remote := newAgent(t, func(_ context.Context, rc *a2asrv.RequestContext, w *writer) error {
		if rc.StoredTask == nil {
			if err := w.status(a2a.TaskStateWorking, false, plan("Ask the region", "Report")); err != nil {
				return err
			}
			return w.status(a2a.TaskStateInputRequired, true, a2a.TextPart{Text: "Which region?"})
		}
		var answer string
		for _, p := range rc.Message.Parts {
			if tp, ok := p.(a2a.TextPart); ok {
				answer = tp.Text
			}
		}
		return w.answer("report for " + answer)
	})
	model := dawntest.Script().CallTool("task", delegate("write the report")).Reply("The report is in.")
	base := serveLead(t, "card: "+remote.cardURL()+"\n", model)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/q1/runs/stream", apptest.RunBody("/lead", "report please")))
	ask := find(t, events, "interrupt")
	detail, _ := ask["detail"].(map[string]any)
	if ask["kind"] != "remote_input" || detail["question"] != "Which region?" || detail["subagent"] != "remote" {
		t.Fatalf("interrupt = %v; want the remote's question", ask)
	}
	find(t, events, "subagent.plan_update")
	first := <-remote.started

	var state struct {
		Next []string `json:"next"`
	}
	apptest.GetJSON(t, base+"/threads/q1/state", &state)

	body := fmt.Sprintf(`{"route":"/lead","resume":[{"interruptId":%q,"status":"resolved","payload":"EMEA"}]}`, ask["interruptId"])
	events = apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/q1/resume", body))
	if out, errText := taskResult(t, events); out != "report for EMEA" || errText != "" {
		t.Fatalf("task result %q, error %q after the answer; events %s", out, errText, types(events))
	}
	if second := <-remote.started; second != first {
		t.Errorf("the answer went to task %s; want the asking task %s", second, first)
	}
	if done := find(t, events, "done"); !strings.Contains(fmt.Sprint(done), "The report is in.") {
		t.Errorf("done = %v", done)
	}
	if got := remote.got(); len(got) != 2 || got[1] != "EMEA" {
		t.Errorf("remote got %q; want the input, then the answer", got)
	}
}

// TestRemoteQuestionDeclined: a person who cancels the question cancels
// the remote task, and the model gets the refusal as the task's error.
func TestRemoteQuestionDeclined(t *testing.T) {
	remote := newAgent(t, func(_ context.Context, rc *a2asrv.RequestContext, w *writer) error {
		return w.status(a2a.TaskStateInputRequired, true, a2a.TextPart{Text: "Which region?"})
	})
	model := dawntest.Script().CallTool("task", delegate("write the report")).Reply("No report then.")
	base := serveLead(t, "card: "+remote.cardURL()+"\n", model)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/d1/runs/stream", apptest.RunBody("/lead", "report please")))
	ask := find(t, events, "interrupt")
	first := <-remote.started
	body := fmt.Sprintf(`{"route":"/lead","resume":[{"interruptId":%q,"status":"cancelled"}]}`, ask["interruptId"])
	events = apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/d1/resume", body))
	if _, errText := taskResult(t, events); !strings.Contains(errText, "declined") {
		t.Errorf("task error %q; want the declined answer", errText)
	}
	select {
	case id := <-remote.cancelled:
		if id != first {
			t.Errorf("cancelled task %s; want %s", id, first)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the remote task was not cancelled")
	}
}

// TestRemoteCancelPropagates: cancelling the parent run sends tasks/cancel
// to the remote agent, and the parent's stream ends cancelled, even when
// the cancel comes before the agent's first event named its task.
func TestRemoteCancelPropagates(t *testing.T) {
	remote := newAgent(t, func(ctx context.Context, rc *a2asrv.RequestContext, w *writer) error {
		if err := w.status(a2a.TaskStateWorking, false, plan("Work forever")); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	})
	remote.delay = 300 * time.Millisecond
	model := dawntest.Script().CallTool("task", delegate("work")).Reply("unreached")
	base := serveLead(t, "card: "+remote.cardURL()+"\n", model)
	got := make(chan []stream.Event, 1)
	resp := apptest.PostJSON(t, base+"/threads/c1/runs/stream", apptest.RunBody("/lead", "go"))
	go func() { got <- readAll(resp) }()
	var task a2a.TaskID
	select {
	case task = <-remote.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the remote agent never started")
	}
	cancel := apptest.PostJSON(t, base+"/threads/c1/cancel", `{}`)
	cancel.Body.Close()
	if cancel.StatusCode != http.StatusOK {
		t.Fatalf("cancel answered %d", cancel.StatusCode)
	}
	select {
	case id := <-remote.cancelled:
		if id != task {
			t.Errorf("cancelled %s; want %s", id, task)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tasks/cancel never reached the remote agent")
	}
	events := <-got
	if done := find(t, events, "done"); !strings.Contains(fmt.Sprint(done), "cancelled:true") {
		t.Errorf("done = %v; want cancelled", done)
	}
}

// TestRemoteKilledMidTask: a remote agent whose connection dies mid-task
// is a tool error the model sees, and the parent answers.
func TestRemoteKilledMidTask(t *testing.T) {
	var remote *agent
	remote = newAgent(t, func(ctx context.Context, rc *a2asrv.RequestContext, w *writer) error {
		if err := w.status(a2a.TaskStateWorking, false, plan("Start")); err != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond) // the update reaches the client
		remote.srv.CloseClientConnections()
		<-ctx.Done()
		return nil
	})
	model := dawntest.Script().CallTool("task", delegate("work")).Reply("The remote agent failed; here is what I know.")
	base := serveLead(t, "card: "+remote.cardURL()+"\nretries: 0\n", model)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/k1/runs/stream", apptest.RunBody("/lead", "go")))
	find(t, events, "subagent.plan_update")
	_, errText := taskResult(t, events)
	if !strings.Contains(errText, remote.cardURL()) || !(strings.Contains(errText, "broke mid-task") || strings.Contains(errText, "ended its stream")) {
		t.Errorf("task error %q; want the broken connection named", errText)
	}
	if end := find(t, events, "subagent.end"); end["error"] == nil {
		t.Errorf("subagent.end = %v; want its error", end)
	}
	if done := find(t, events, "done"); !strings.Contains(fmt.Sprint(done), "here is what I know") {
		t.Errorf("done = %v; want the parent's answer", done)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1]
	if tool := fmt.Sprint(last[len(last)-1]); !strings.Contains(tool, "broke mid-task") && !strings.Contains(tool, "ended its stream") {
		t.Errorf("the model's last request ends with %s; want the task's error", tool)
	}
}

// TestRemoteDown: a card nobody serves is a tool error after the retries,
// and the parent goes on.
func TestRemoteDown(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	url := gone.URL
	gone.Close()
	model := dawntest.Script().CallTool("task", delegate("work")).Reply("It is down.")
	base := serveLead(t, "card: "+url+"\nretries: 1\n", model)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/r1/runs/stream", apptest.RunBody("/lead", "go")))
	_, errText := taskResult(t, events)
	if !strings.Contains(errText, "cannot be fetched") || !strings.Contains(errText, "after 2 attempts") {
		t.Errorf("task error %q; want the card that cannot be fetched, after 2 attempts", errText)
	}
	if done := find(t, events, "done"); !strings.Contains(fmt.Sprint(done), "It is down.") {
		t.Errorf("done = %v", done)
	}
}

// TestRemoteBadCard: a card URL that serves no agent card is a tool error
// naming it.
func TestRemoteBadCard(t *testing.T) {
	junk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"name": 7}`) }))
	t.Cleanup(junk.Close)
	model := dawntest.Script().CallTool("task", delegate("work")).Reply("Bad card.")
	base := serveLead(t, "card: "+junk.URL+"/card.json\n", model)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/b1/runs/stream", apptest.RunBody("/lead", "go")))
	if _, errText := taskResult(t, events); !strings.Contains(errText, "is not an agent card") || !strings.Contains(errText, junk.URL+"/card.json") {
		t.Errorf("task error %q", errText)
	}
}

// TestRemoteTimeout: a remote agent that does not finish within the
// a2a.yaml's timeout is cancelled, and the model gets the timeout.
func TestRemoteTimeout(t *testing.T) {
	remote := newAgent(t, func(ctx context.Context, rc *a2asrv.RequestContext, w *writer) error {
		if err := w.status(a2a.TaskStateWorking, false); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	})
	model := dawntest.Script().CallTool("task", delegate("work")).Reply("Too slow.")
	base := serveLead(t, "card: "+remote.cardURL()+"\ntimeout: 1s\n", model)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/t1/runs/stream", apptest.RunBody("/lead", "go")))
	if _, errText := taskResult(t, events); !strings.Contains(errText, "did not finish within 1s") {
		t.Errorf("task error %q; want the timeout", errText)
	}
	select {
	case <-remote.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the timed-out task was not cancelled")
	}
}

// readAll reads an event stream to its end, for a goroutine.
func readAll(resp *http.Response) []stream.Event {
	defer resp.Body.Close()
	r := stream.NewReader(bufio.NewReader(resp.Body))
	var events []stream.Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) || err != nil {
			return events
		}
		events = append(events, e)
	}
}

// TestRemoteBounds: a chatty remote agent's events stop reaching the
// parent's stream past the bound, and its text past max_text_bytes, while
// its answer, cut to the bound, still comes back.
func TestRemoteBounds(t *testing.T) {
	defer a2acall.SetMaxEvents(40)()
	long := strings.Repeat("x", 3000)
	remote := newAgent(t, func(_ context.Context, rc *a2asrv.RequestContext, w *writer) error {
		for i := 0; i < 60; i++ {
			if err := w.status(a2a.TaskStateWorking, false, a2a.TextPart{Text: strings.Repeat("tick ", 40)}); err != nil {
				return err
			}
		}
		return w.answer(long)
	})
	model := dawntest.Script().CallTool("task", delegate("chat")).Reply("ok")
	base := serveLead(t, "card: "+remote.cardURL()+"\nmax_text_bytes: 2048\n", model)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/n1/runs/stream", apptest.RunBody("/lead", "go")))
	forwarded, streamed := 0, 0
	for _, e := range events {
		if strings.HasPrefix(e.Type, "subagent.") && e.Type != "subagent.start" && e.Type != "subagent.end" {
			forwarded++
		}
		if e.Type == "subagent.message" {
			var m struct{ Chunk string }
			_ = json.Unmarshal(e.Data, &m)
			streamed += len(m.Chunk)
		}
	}
	if forwarded != 40 || streamed != 2048 {
		t.Errorf("%d events forwarded, %d bytes of text streamed; want 40 and 2048", forwarded, streamed)
	}
	out, errText := taskResult(t, events)
	if errText != "" || !strings.HasPrefix(out, strings.Repeat("x", 2048)+"\n[remote answer cut") {
		t.Errorf("task result %.80q…, error %q; want the answer cut at 2048 bytes", out, errText)
	}
}

// TestRemoteQuestionFromNestedSubagent: a remote agent called by a
// subagent route parks the root thread; the answer reaches it through the
// subagent, which goes on, and so does the root.
func TestRemoteQuestionFromNestedSubagent(t *testing.T) {
	remote := newAgent(t, func(_ context.Context, rc *a2asrv.RequestContext, w *writer) error {
		if rc.StoredTask == nil {
			return w.status(a2a.TaskStateInputRequired, true, a2a.TextPart{Text: "Which year?"})
		}
		return w.answer(fmt.Sprint("figures for ", rc.Message.Parts[0].(a2a.DataPart).Data["year"]))
	})
	dir := apptest.WriteApp(t, map[string]string{
		"lead/agent.md":                                   "You lead.",
		"lead/subagents/helper/agent.md":                  "You help.",
		"lead/subagents/helper/subagents/remote/a2a.yaml": "card: " + remote.cardURL() + "\n",
	})
	model := dawntest.Script().
		CallTool("task", map[string]any{"subagent": "helper", "input": "get the figures"}).
		CallTool("task", delegate("figures")).
		Reply("helper: figures for 2024").
		Reply("All done.")
	base := apptest.New(t, dir, model, apptest.Options{}).Serve(t)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/n2/runs/stream", apptest.RunBody("/lead", "go")))
	ask := find(t, events, "interrupt")
	if path, _ := ask["path"].([]any); ask["kind"] != "remote_input" || len(path) != 1 {
		t.Fatalf("interrupt = %v; want the remote's question on the helper's path", ask)
	}
	body := fmt.Sprintf(`{"route":"/lead","resume":[{"interruptId":%q,"status":"resolved","payload":{"year":2024}}]}`, ask["interruptId"])
	events = apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/n2/resume", body))
	var inner bool
	for _, e := range events {
		inner = inner || (e.Type == "subagent.tool_result" && strings.Contains(string(e.Data), "figures for 2024"))
	}
	if !inner {
		t.Errorf("no subagent.tool_result with the remote's answer in %s", types(events))
	}
	if done := find(t, events, "done"); !strings.Contains(fmt.Sprint(done), "All done.") {
		t.Errorf("done = %v", done)
	}
}
