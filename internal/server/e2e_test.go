package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// TestStreamPlanOverHTTP is the end-to-end path: a run on a dynamic route,
// hit by a concrete path, streams tool_call, tool_result, plan_update and
// done over real SSE; the state endpoint shows the final todos; and the
// state survives a restart on the same SQLite file.
func TestStreamPlanOverHTTP(t *testing.T) {
	dir := supportApp(t)
	db := filepath.Join(t.TempDir(), "dawn.db")
	model := dawntest.Script().
		CallTool("writeTodos", fourTodos(0)).
		CallTool("writeTodos", fourTodos(4)).
		Reply("Your account is fine.")
	h := apptest.New(t, dir, model, apptest.Options{StorePath: db})
	url := h.Serve(t)

	events := readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("/support/acme", "Help me with my account")))
	checkPlanStream(t, events)
	checkFinalState(t, url)

	// Restart: a new server on the same database file sees the same state.
	h.Store.Close()
	h2 := apptest.New(t, dir, dawntest.Script(), apptest.Options{StorePath: db})
	checkFinalState(t, h2.Serve(t))
}

// checkPlanStream checks the events of TestStreamPlanOverHTTP's run: the
// types in order with consecutive ids, the first plan_update, and the
// answer's chunks as bare JSON strings.
func checkPlanStream(t *testing.T, events []stream.Event) {
	t.Helper()
	var types []string
	for _, e := range events {
		if e.Type != stream.TypeChunk {
			types = append(types, e.Type)
		}
	}
	want := []string{"model_call", "tool_call", "tool_result", "plan_update", "model_call", "tool_call", "tool_result", "plan_update", "model_call", "done"}
	if !slices.Equal(types, want) {
		t.Fatalf("event types = %v, want %v", types, want)
	}
	for i, e := range events {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d has id %d, want consecutive ids from 1", i, e.ID)
		}
	}
	var first struct {
		Todos []dawntest.Todo `json:"todos"`
	}
	if err := json.Unmarshal(events[3].Data, &first); err != nil || len(first.Todos) != 4 || first.Todos[0].Status != "in_progress" {
		t.Fatalf("first plan_update = %s (%v)", events[3].Data, err)
	}
	var answer strings.Builder
	for _, e := range events {
		if e.Type == stream.TypeChunk {
			var delta string // Dawn's shape: a bare JSON string
			if err := json.Unmarshal(e.Data, &delta); err != nil {
				t.Fatalf("chunk data %s is not a JSON string: %v", e.Data, err)
			}
			answer.WriteString(delta)
		}
	}
	if answer.String() != "Your account is fine." {
		t.Errorf("streamed chunks = %q", answer.String())
	}
}

// checkFinalState checks thread t1's state at url after
// TestStreamPlanOverHTTP's run: every todo done, six messages, and Dawn's
// shape of the state.
func checkFinalState(t *testing.T, url string) {
	t.Helper()
	var st struct {
		Values struct {
			Messages []map[string]any `json:"messages"`
			Todos    []dawntest.Todo  `json:"todos"`
		} `json:"values"`
	}
	if code := getJSON(t, url+"/threads/t1/state", &st); code != http.StatusOK {
		t.Fatalf("state status %d", code)
	}
	if len(st.Values.Todos) != 4 || st.Values.Todos[3].Status != "completed" {
		t.Fatalf("state todos = %+v", st.Values.Todos)
	}
	// user, assistant(call), tool, assistant(call), tool, assistant(answer)
	if len(st.Values.Messages) != 6 {
		t.Fatalf("state has %d messages, want 6", len(st.Values.Messages))
	}
	// Dawn's shape: {values, next, config, metadata, created_at,
	// parent_config}, with config naming the thread.
	var shape map[string]json.RawMessage
	getJSON(t, url+"/threads/t1/state", &shape)
	for _, key := range []string{"values", "next", "config", "metadata", "created_at", "parent_config"} {
		if _, ok := shape[key]; !ok {
			t.Errorf("state lacks Dawn's %q field: %s", key, mustMarshal(shape))
		}
	}
	var config struct {
		Configurable struct {
			ThreadID string `json:"thread_id"`
		} `json:"configurable"`
	}
	if err := json.Unmarshal(shape["config"], &config); err != nil || config.Configurable.ThreadID != "t1" {
		t.Errorf("state config = %s, want {\"configurable\":{\"thread_id\":\"t1\",...}}", shape["config"])
	}
	if string(shape["next"]) != "[]" {
		t.Errorf("state next = %s, want [] for an idle thread", shape["next"])
	}
}

func TestRunWaitReturnsFinalValues(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", fourTodos(1)).Reply("Done.")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/threads/w1/runs/wait", runBody("/support/[tenant]#agent", "hi"))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %+v", resp.StatusCode, decodeErr(t, resp))
	}
	var values struct {
		Messages []map[string]any `json:"messages"`
		Todos    []dawntest.Todo  `json:"todos"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&values); err != nil {
		t.Fatal(err)
	}
	if len(values.Todos) != 4 || values.Todos[1].Status != "in_progress" || len(values.Messages) != 4 {
		t.Fatalf("values = %+v", values)
	}
}

func TestInvalidWriteTodosKeepsStateAndRunGoesOn(t *testing.T) {
	bad := map[string]any{"todos": []map[string]string{{"content": "a", "status": "pending"}, {"content": "b", "status": "done"}}}
	model := dawntest.Script().CallTool("writeTodos", bad).Reply("Sorry.")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	res := h.Run(t, "inv", "/support/acme", "hi")
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	if n := len(dawntest.PlanUpdates(t, res.Events, "plan_update")); n != 0 {
		t.Fatalf("%d plan_update events after invalid input", n)
	}
	todos := res.Todos(t)
	if len(todos) != 4 || todos[0].Status != "pending" {
		t.Fatalf("todos changed: %+v", todos)
	}
	var tr struct{ Error string }
	for _, e := range res.Events {
		if e.Type == stream.TypeToolResult {
			_ = json.Unmarshal(e.Data, &tr)
		}
	}
	if !strings.Contains(tr.Error, "todos[1].status must be one of pending, in_progress, completed") {
		t.Fatalf("tool_result error = %q", tr.Error)
	}
	// The model saw the error and answered: two model calls.
	if model.Calls() != 2 {
		t.Fatalf("model calls = %d", model.Calls())
	}
}

func TestSubagentPlanUpdateIsForwarded(t *testing.T) {
	childPlan := map[string]any{"todos": []map[string]string{{"content": "Find sources", "status": "in_progress"}, {"content": "Summarize findings", "status": "pending"}}}
	model := dawntest.Script().
		CallTool("task", map[string]any{"subagent": "researcher", "input": "look it up"}). // parent
		CallTool("writeTodos", childPlan).                                                 // child
		Reply("child answer").                                                             // child
		Reply("parent answer")                                                             // parent
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	res := h.Run(t, "sub", "/research", "question")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var fwd *stream.Event
	for i, e := range res.Events {
		if e.Type == "subagent.plan_update" {
			fwd = &res.Events[i]
		}
	}
	if fwd == nil {
		t.Fatalf("no subagent.plan_update in %v", dawntest.Types(res.Events))
	}
	var d struct {
		Todos    []dawntest.Todo `json:"todos"`
		CallID   string          `json:"call_id"`
		Subagent string          `json:"subagent"`
		RouteID  string          `json:"route_id"`
		Depth    int             `json:"depth"`
	}
	if err := json.Unmarshal(fwd.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Subagent != "researcher" || d.RouteID != "/research/subagents/researcher" || d.Depth != 1 || d.CallID == "" || len(d.Todos) != 2 {
		t.Fatalf("forwarded data = %s", fwd.Data)
	}
	// The child's two model calls reach the parent's stream as
	// subagent.model_call, between subagent.start and subagent.end, which
	// come between the task call and its result.
	var types []string
	for _, e := range res.Events {
		if e.Type != stream.TypeChunk && e.Type != stream.TypeSubagentMessage {
			types = append(types, e.Type)
		}
	}
	want := "model_call,tool_call,subagent.start,subagent.model_call,subagent.tool_call,subagent.tool_result,subagent.plan_update,subagent.model_call,subagent.end,tool_result,model_call,done"
	if got := strings.Join(types, ","); got != want {
		t.Fatalf("event types without chunks = %s, want %s", got, want)
	}
	for _, e := range res.Events {
		if e.Type == "subagent.model_call" && (!strings.Contains(string(e.Data), `"subagent":"researcher"`) || !strings.Contains(string(e.Data), `"duration_ms":`)) {
			t.Fatalf("subagent.model_call = %s, want the duration and the subagent fields", e.Data)
		}
	}
	// The parent route has no plan.md: its state has no todos, and its tool
	// list never had writeTodos.
	if _, ok := res.Values["todos"]; ok {
		t.Fatalf("parent state has todos: %s", res.Values["todos"])
	}
	for _, tools := range model.Tools()[:1] {
		for _, tl := range tools {
			if tl.Function.Name == "writeTodos" {
				t.Fatal("parent without plan.md was offered writeTodos")
			}
		}
	}
}

func TestOneRunPerThreadUnderConcurrency(t *testing.T) {
	gate := make(chan struct{})
	model := dawntest.Script().Wait(gate).Reply("ok")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	const n = 20
	codes := make([]int, n)
	kinds := make([]string, n)
	var conflicts atomic.Int32 // read while the requests are still going
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			started.Wait()
			resp := post(t, url+"/threads/busy/runs/wait", runBody("/plain", "hi"))
			codes[i] = resp.StatusCode
			if resp.StatusCode != http.StatusOK {
				kinds[i] = decodeErr(t, resp).Error.Kind
				if kinds[i] == "run_in_flight" {
					conflicts.Add(1)
				}
			} else {
				resp.Body.Close()
			}
		}()
	}
	// Let every request arrive, then release the one run.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if conflicts.Load() == n-1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(gate)
	wg.Wait()
	ok, conflict := 0, 0
	for i := range n {
		switch {
		case codes[i] == http.StatusOK:
			ok++
		case codes[i] == http.StatusConflict && kinds[i] == "run_in_flight":
			conflict++
		}
	}
	if ok != 1 || conflict != n-1 {
		t.Fatalf("ok=%d conflict=%d codes=%v", ok, conflict, codes)
	}
}

func TestCancelMidRun(t *testing.T) {
	gate := make(chan struct{}) // never closed: the model hangs until cancelled
	model := dawntest.Script().CallTool("writeTodos", fourTodos(0)).Wait(gate).Reply("never")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/threads/c1/runs/stream", runBody("/support/acme", "hi"))
	done := make(chan []stream.Event)
	go func() { done <- readSSE(t, resp) }()
	// Wait until the first step is saved, then cancel.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var st struct {
			Checkpoint struct{ Step int } `json:"checkpoint"`
		}
		getJSON(t, url+"/threads/c1/state", &st)
		if st.Checkpoint.Step >= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	c := post(t, url+"/threads/c1/cancel", "")
	var cr struct{ ThreadID, Status string }
	_ = json.NewDecoder(c.Body).Decode(&cr)
	c.Body.Close()
	if c.StatusCode != http.StatusOK || cr.Status != "interrupted" {
		t.Fatalf("cancel answered %d %+v, want 200 status interrupted", c.StatusCode, cr)
	}
	events := <-done
	last := events[len(events)-1]
	if last.Type != "done" || !strings.Contains(string(last.Data), `"cancelled":true`) {
		t.Fatalf("last event = %s %s", last.Type, last.Data)
	}
	// The thread keeps the first step and takes a new run.
	var st struct {
		Values struct {
			Todos []dawntest.Todo `json:"todos"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/c1/state", &st)
	if len(st.Values.Todos) != 4 || st.Values.Todos[0].Status != "in_progress" {
		t.Fatalf("state after cancel: %+v", st.Values.Todos)
	}
	var runs []struct{ Status string }
	getJSON(t, url+"/threads/c1/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "cancelled" {
		t.Fatalf("runs = %+v", runs)
	}
}

func TestBadRequests(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	url := h.Serve(t)
	big := `{"route":"/plain","input":{"messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<20) + `"}]}}`
	cases := []struct {
		name, path, body string
		status           int
		kind             string
	}{
		{"not json", "/threads/b/runs/wait", "{", 400, "invalid_body"},
		{"no route", "/threads/b/runs/wait", `{"input":{"messages":[{"role":"user","content":"x"}]}}`, 400, "invalid_body"},
		{"no messages", "/threads/b/runs/wait", `{"route":"/plain","input":{}}`, 400, "invalid_input"},
		{"bad role", "/threads/b/runs/wait", `{"route":"/plain","input":{"messages":[{"role":"tool","content":"x"}]}}`, 400, "invalid_input"},
		{"todos in input", "/threads/b/runs/wait", `{"route":"/support/acme","input":{"messages":[{"role":"user","content":"x"}],"todos":[]}}`, 400, "invalid_input"},
		{"unknown route", "/threads/b/runs/wait", runBody("/nope", "x"), 404, "route_not_found"},
		{"route escaping the app", "/threads/b/runs/wait", runBody("/support/../../etc", "x"), 400, "invalid_route"},
		{"encoded slash in a param", "/threads/b/runs/wait", runBody("/support/..%2fetc", "x"), 400, "invalid_route"},
		{"encoded dot-dot param", "/threads/b/runs/wait", runBody("/support/%2e%2e", "x"), 400, "invalid_route"},
		{"encoded NUL in a param", "/threads/b/runs/wait", runBody("/support/a%00b", "x"), 400, "invalid_route"},
		{"control character in a param", "/threads/b/runs/wait", runBody("/support/a\u0007b", "x"), 400, "invalid_route"},
		{"100 KB param", "/threads/b/runs/wait", runBody("/support/"+strings.Repeat("x", 100<<10), "x"), 400, "invalid_route"},
		{"unknown route stream", "/threads/b/runs/stream", runBody("/nope", "x"), 404, "route_not_found"},
		{"too large", "/threads/b/runs/wait", big, 413, "body_too_large"},
		{"thread metadata not object", "/threads", `{"metadata":[1]}`, 400, "invalid_body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, url+tc.path, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %+v", resp.StatusCode, tc.status, decodeErr(t, resp))
			}
			if e := decodeErr(t, resp); e.Error.Kind != tc.kind || e.Error.Message == "" {
				t.Fatalf("error = %+v, want kind %s", e, tc.kind)
			}
		})
	}
	for _, path := range []string{"/threads/missing", "/threads/missing/state"} {
		var e apiErr
		if code := getJSON(t, url+path, &e); code != 404 || e.Error.Kind != "thread_not_found" {
			t.Errorf("GET %s: %d %+v", path, code, e)
		}
	}
}

func TestThreadsCRUD(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok"), apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/threads", `{"metadata":{"user":"ada"}}`)
	var th struct {
		ThreadID  string         `json:"thread_id"`
		CreatedAt string         `json:"created_at"`
		UpdatedAt string         `json:"updated_at"`
		Metadata  map[string]any `json:"metadata"`
		Status    string         `json:"status"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&th)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(th.ThreadID) < 32 || th.Metadata["user"] != "ada" || th.Status != "idle" || th.CreatedAt == "" {
		t.Fatalf("create: %d %+v", resp.StatusCode, th)
	}
	var got map[string]any
	if code := getJSON(t, url+"/threads/"+th.ThreadID, &got); code != 200 || got["thread_id"] != th.ThreadID {
		t.Fatalf("get: %d %v", code, got)
	}
	req, _ := http.NewRequest(http.MethodDelete, url+"/threads/"+th.ThreadID, nil)
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(dresp.Body)
	dresp.Body.Close()
	if dresp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("delete: %d %q, want Dawn's 204 with no body", dresp.StatusCode, body)
	}
	if code := getJSON(t, url+"/threads/"+th.ThreadID, nil); code != 404 {
		t.Fatalf("after delete: %d", code)
	}
	var health map[string]string
	if getJSON(t, url+"/healthz", &health); health["status"] != "ready" {
		t.Fatalf("healthz = %v", health)
	}
	var routes []map[string]any
	getJSON(t, url+"/routes", &routes)
	if len(routes) != 4 {
		t.Fatalf("routes = %v", routes)
	}
}

func TestModelErrorAndTurnLimit(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Fail(errors.New("connection refused")), apptest.Options{})
	url := h.Serve(t)
	events := readSSE(t, post(t, url+"/threads/m1/runs/stream", runBody("/plain", "hi")))
	last := events[len(events)-1]
	if last.Type != "done" || !strings.Contains(string(last.Data), `"error"`) || !strings.Contains(string(last.Data), "connection refused") {
		t.Fatalf("last event = %s %s", last.Type, last.Data)
	}
	resp := post(t, url+"/threads/m2/runs/wait", runBody("/plain", "hi"))
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("wait status %d", resp.StatusCode)
	}
	if e := decodeErr(t, resp); e.Error.Kind != "model_error" {
		t.Fatalf("kind %s", e.Error.Kind)
	}

	loop := dawntest.Script().CallTool("writeTodos", fourTodos(0)).Repeat()
	dir := writeApp(t, map[string]string{"a/agent.md": "---\nmax_turns: 3\n---\nLoop.", "a/plan.md": ""})
	h2 := apptest.New(t, dir, loop, apptest.Options{})
	res := h2.Run(t, "loop", "/a", "go")
	if res.Err == nil || !strings.Contains(res.Err.Error(), "3 turns without a final answer") {
		t.Fatalf("err = %v", res.Err)
	}
	if loop.Calls() != 3 {
		t.Fatalf("model calls = %d, want 3", loop.Calls())
	}
	// The thread is usable afterwards.
	var th struct{ Status string }
	getJSON(t, h2.Serve(t)+"/threads/loop", &th)
	if th.Status == "busy" {
		t.Fatal("thread left busy after a failed run")
	}
}

var fourTodos = apptest.FourTodos
