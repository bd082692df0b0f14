package agui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/internal/server/agui"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// aguiEvent is one AG-UI event as a client reads it.
type aguiEvent map[string]any

func (e aguiEvent) typ() string { s, _ := e["type"].(string); return s }

// aguiReader reads an AG-UI SSE body as @ag-ui/client does: blocks split
// on a blank line, the data lines of each joined and parsed as one JSON
// event; blocks without data (keep-alive comments) are skipped.
type aguiReader struct{ sc *bufio.Scanner }

func newAGUIReader(t *testing.T, resp *http.Response) *aguiReader {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("content type %q, status %d, body %s", ct, resp.StatusCode, data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &aguiReader{sc: sc}
}

// next returns the next event, or nil at the end of the body.
func (r *aguiReader) next(t *testing.T) aguiEvent {
	t.Helper()
	var data []string
	for r.sc.Scan() {
		line := r.sc.Text()
		if line != "" {
			if rest, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(rest, " "))
			}
			continue
		}
		if len(data) == 0 {
			continue
		}
		var e aguiEvent
		if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &e); err != nil {
			t.Fatalf("AG-UI event is not JSON: %v: %s", err, data)
		}
		return e
	}
	if err := r.sc.Err(); err != nil {
		t.Fatal(err)
	}
	return nil
}

// readAGUI reads a whole AG-UI SSE body.
func readAGUI(t *testing.T, resp *http.Response) []aguiEvent {
	t.Helper()
	defer resp.Body.Close()
	r := newAGUIReader(t, resp)
	var events []aguiEvent
	for e := r.next(t); e != nil; e = r.next(t) {
		events = append(events, e)
	}
	return events
}

func aguiTypes(events []aguiEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.typ()
	}
	return out
}

// aguiBody is a RunAgentInput as HttpAgent sends it.
func aguiBody(threadID, runID, text string, state any) string {
	b, _ := json.Marshal(map[string]any{
		"threadId": threadID, "runId": runID, "state": state,
		"messages": []map[string]any{{"id": "m-" + runID, "role": "user", "content": text}},
		"tools":    []any{}, "context": []any{}, "forwardedProps": map[string]any{},
	})
	return string(b)
}

// applyPatch applies RFC 6902 add, replace and remove operations to the
// objects of doc, as a client does, failing on one that does not apply
// (replacing or removing a member that is not there, adding under a parent
// that is not there).
func applyPatch(t *testing.T, doc map[string]any, ops []any) {
	t.Helper()
	for _, o := range ops {
		op, _ := o.(map[string]any)
		path, _ := op["path"].(string)
		tokens := strings.Split(path, "/")[1:]
		parent := doc
		for _, tok := range tokens[:len(tokens)-1] {
			child, ok := parent[unescape(tok)].(map[string]any)
			if !ok {
				t.Fatalf("patch %v: %s has no object parent", op, path)
			}
			parent = child
		}
		key := unescape(tokens[len(tokens)-1])
		_, exists := parent[key]
		switch op["op"] {
		case "add":
			parent[key] = op["value"]
		case "replace":
			if !exists {
				t.Fatalf("patch %v replaces a member that is not there", op)
			}
			parent[key] = op["value"]
		case "remove":
			if !exists {
				t.Fatalf("patch %v removes a member that is not there", op)
			}
			delete(parent, key)
		default:
			t.Fatalf("unexpected patch operation %v", op)
		}
	}
}

func unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// clientState is the shared state a client holds after events: the last
// snapshot with every later delta applied.
func clientState(t *testing.T, events []aguiEvent) map[string]any {
	t.Helper()
	var state map[string]any
	for _, e := range events {
		switch e.typ() {
		case "STATE_SNAPSHOT":
			state, _ = e["snapshot"].(map[string]any)
		case "STATE_DELTA":
			if state == nil {
				t.Fatal("STATE_DELTA before any STATE_SNAPSHOT")
			}
			ops, _ := e["delta"].([]any)
			applyPatch(t, state, ops)
		}
	}
	return state
}

// savedValues is GET /threads/:id/state's values, decoded.
func savedValues(t *testing.T, url, threadID string) map[string]any {
	t.Helper()
	var st struct {
		Values map[string]any `json:"values"`
	}
	if code := getJSON(t, url+"/threads/"+threadID+"/state", &st); code != http.StatusOK {
		t.Fatalf("GET /threads/%s/state: %d", threadID, code)
	}
	return st.Values
}

// checkRunShape checks what every AG-UI client relies on: RUN_STARTED
// first with the request's ids, then STATE_SNAPSHOT, text messages and
// tool calls opened before their content and closed before the run ends,
// and one terminal event, last.
func checkRunShape(t *testing.T, events []aguiEvent, threadID, runID string) {
	t.Helper()
	types := aguiTypes(events)
	if len(events) < 3 || types[0] != "RUN_STARTED" || types[1] != "STATE_SNAPSHOT" {
		t.Fatalf("events = %v, want RUN_STARTED, STATE_SNAPSHOT, ...", types)
	}
	if events[0]["threadId"] != threadID || events[0]["runId"] != runID {
		t.Errorf("RUN_STARTED = %v, want threadId %s runId %s", events[0], threadID, runID)
	}
	open := map[string]bool{}
	for i, e := range events {
		last := i == len(events)-1
		switch e.typ() {
		case "RUN_FINISHED", "RUN_ERROR":
			if !last {
				t.Fatalf("terminal event %s at %d of %v", e.typ(), i, types)
			}
		case "TEXT_MESSAGE_START":
			open["msg:"+e["messageId"].(string)] = true
		case "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END":
			if !open["msg:"+e["messageId"].(string)] {
				t.Fatalf("%s for a message that is not open: %v", e.typ(), e)
			}
			if e.typ() == "TEXT_MESSAGE_END" {
				delete(open, "msg:"+e["messageId"].(string))
			}
		case "TOOL_CALL_START":
			open["call:"+e["toolCallId"].(string)] = true
		case "TOOL_CALL_ARGS", "TOOL_CALL_END":
			if !open["call:"+e["toolCallId"].(string)] {
				t.Fatalf("%s for a call that is not open: %v", e.typ(), e)
			}
			if e.typ() == "TOOL_CALL_END" {
				delete(open, "call:"+e["toolCallId"].(string))
			}
		}
		if last && e.typ() != "RUN_FINISHED" && e.typ() != "RUN_ERROR" {
			t.Fatalf("last event is %s, not RUN_FINISHED or RUN_ERROR: %v", e.typ(), types)
		}
	}
	if len(open) > 0 {
		t.Fatalf("still open at the end: %v", open)
	}
}

// TestAGUIRunOnOfflineModel runs the offline model on a planning route
// through /agui: the text, the writeTodos calls and their results arrive as
// AG-UI events, and the plan a client holds after applying every delta is
// the thread's saved plan.
func TestAGUIRunOnOfflineModel(t *testing.T) {
	h := apptest.New(t, supportApp(t), models.NewOffline(), apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/agui/%2Fsupport%2Facme%23agent", aguiBody("t1", "r1", "My invoice is wrong", map[string]any{}))
	if resp.Header.Get("Dawn-Run-Id") == "" {
		t.Error("no Dawn-Run-Id header")
	}
	events := readAGUI(t, resp)
	checkRunShape(t, events, "t1", "r1")
	if last := events[len(events)-1]; last.typ() != "RUN_FINISHED" || !reflect.DeepEqual(last["outcome"], map[string]any{"type": "success"}) {
		t.Fatalf("last event = %v", last)
	}
	var text strings.Builder
	calls, results, deltas := 0, 0, 0
	for _, e := range events {
		switch e.typ() {
		case "TEXT_MESSAGE_CONTENT":
			text.WriteString(e["delta"].(string))
		case "TOOL_CALL_START":
			calls++
			if e["toolCallName"] != "writeTodos" {
				t.Errorf("tool call %v", e)
			}
		case "TOOL_CALL_RESULT":
			results++
		case "STATE_DELTA":
			deltas++
		}
	}
	if !strings.HasPrefix(text.String(), "Offline model: worked through 4 plan items") {
		t.Errorf("answer text = %q", text.String())
	}
	if calls < 2 || results != calls || deltas != calls {
		t.Errorf("%d calls, %d results, %d state deltas: %v", calls, results, deltas, aguiTypes(events))
	}
	saved := savedValues(t, url, "t1")
	state := clientState(t, events)
	if !reflect.DeepEqual(state["todos"], saved["todos"]) {
		t.Fatalf("client's todos = %v\nthread's todos = %v", state["todos"], saved["todos"])
	}
	// The deltas alone got the plan right: the run's final values did not
	// need to correct it.
	if last := events[len(events)-2]; last.typ() == "STATE_DELTA" {
		t.Errorf("a closing STATE_DELTA corrected the plan: %v", last)
	}
}

// TestAGUIRouteKeys: Dawn's URL-encoded "<routeId>#<kind>" key, a route id
// and a concrete path written out all name the route; an unknown route is a
// JSON 404 before any event.
func TestAGUIRouteKeys(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	url := h.Serve(t)
	for i, path := range []string{"/agui/%2Fsupport%2Facme%23agent", "/agui/%2Fsupport%2F%5Btenant%5D%23agent", "/agui/support/acme", "/agui/%2Fplain", "/agui/plain"} {
		thread := "keys" + string(rune('a'+i))
		events := readAGUI(t, post(t, url+path, aguiBody(thread, "r", "hi", nil)))
		checkRunShape(t, events, thread, "r")
		if events[len(events)-1].typ() != "RUN_FINISHED" {
			t.Errorf("POST %s: %v", path, aguiTypes(events))
		}
	}
	for _, path := range []string{"/agui/%2Fnope%23agent", "/agui/nope", "/agui/"} {
		resp := post(t, url+path, aguiBody("keys-missing", "r", "hi", nil))
		if e := decodeErr(t, resp); resp.StatusCode != http.StatusNotFound || e.Error.Kind != "route_not_found" {
			t.Errorf("POST %s: %d %+v, want 404 route_not_found", path, resp.StatusCode, e)
		}
	}
	var e apiErr
	if code := getJSON(t, url+"/threads/keys-missing", &e); code != http.StatusNotFound {
		t.Errorf("a request for an unknown route created its thread (%d)", code)
	}
}

// TestAGUIBadBodies: a body that is not a RunAgentInput this endpoint can
// run is a 400 naming the field, and leaves no thread behind.
func TestAGUIBadBodies(t *testing.T) {
	h := apptest.New(t, stateApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	url := h.Serve(t)
	user := `"messages":[{"id":"m","role":"user","content":"hi"}]`
	cases := []struct {
		name, body, field string
	}{
		{"not json", `{"threadId":`, "JSON"},
		{"no threadId", `{"runId":"r",` + user + `}`, "threadId"},
		{"threadId not a string", `{"threadId":7,"runId":"r",` + user + `}`, "threadId"},
		{"no runId", `{"threadId":"bad",` + user + `}`, "runId"},
		{"threadId with a slash", `{"threadId":"a/b","runId":"r",` + user + `}`, "threadId"},
		{"no user message", `{"threadId":"bad","runId":"r","messages":[{"id":"m","role":"assistant","content":"hi"}]}`, "messages"},
		{"content a number", `{"threadId":"bad","runId":"r","messages":[{"id":"m","role":"user","content":7}]}`, "messages[0].content"},
		{"an image part", `{"threadId":"bad","runId":"r","messages":[{"id":"m","role":"user","content":[{"type":"image","source":{"type":"url","value":"http://x"}}]}]}`, "messages[0].content[0]"},
		{"state an array", `{"threadId":"bad","runId":"r","state":[1],` + user + `}`, "state"},
		{"state field of the wrong type", `{"threadId":"bad","runId":"r","state":{"ticket_id":7},` + user + `}`, "state.ticket_id"},
		{"append field rewritten", `{"threadId":"bad","runId":"r","state":{"notes":"x"},` + user + `}`, "state.notes"},
		{"resume entry with an unknown field", `{"threadId":"bad","runId":"r","resume":[{"interruptId":"i","status":"resolved","payload":"once","note":1}],` + user + `}`, "resume[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := post(t, url+"/agui/%2Fsupport%2Facme%23agent", c.body)
			e := decodeErr(t, resp)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error.Message, c.field) {
				t.Fatalf("%d %+v, want 400 naming %s", resp.StatusCode, e, c.field)
			}
		})
	}
	var e apiErr
	if code := getJSON(t, url+"/threads/bad", &e); code != http.StatusNotFound {
		t.Errorf("a refused request left thread bad behind (%d)", code)
	}
	// Text parts are joined into the message.
	events := readAGUI(t, post(t, url+"/agui/support/acme", `{"threadId":"parts","runId":"r","messages":[{"id":"m","role":"user","content":[{"type":"text","text":"Hel"},{"type":"text","text":"lo"}]}]}`))
	checkRunShape(t, events, "parts", "r")
	msgs, _ := savedValues(t, url, "parts")["messages"].([]any)
	if len(msgs) == 0 || msgs[0].(map[string]any)["content"] != "Hello" {
		t.Errorf("saved messages = %v", msgs)
	}
}

// stateApp is a planning route with state.yaml fields: ticket_id (replace)
// and notes (append).
func stateApp(t *testing.T) string {
	return writeApp(t, map[string]string{
		"support/[tenant]/agent.md":   "You help customers.",
		"support/[tenant]/plan.md":    "- [ ] Understand the customer request\n- [ ] Write the final response\n",
		"support/[tenant]/state.yaml": "ticket_id:\n  type: string\n  default: \"\"\nnotes:\n  type: array\n",
	})
}

// TestAGUIStateInput: the client sends its whole state back on every run.
// What belongs to a capability (the plan) or to nobody (subagents, the
// client's own keys) is skipped; state.yaml fields are set where the client
// changed them, an append field taking what the client added at the end.
// The snapshot keeps the client's own keys.
func TestAGUIStateInput(t *testing.T) {
	h := apptest.New(t, stateApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	url := h.Serve(t)
	run := func(runID string, state map[string]any) []aguiEvent {
		t.Helper()
		events := readAGUI(t, post(t, url+"/agui/support/acme", aguiBody("st", runID, "hi", state)))
		checkRunShape(t, events, "st", runID)
		return events
	}
	first := run("r1", map[string]any{
		"todos":     []any{map[string]any{"content": "forged", "status": "completed"}},
		"subagents": map[string]any{"old": map[string]any{}},
		"ui":        map[string]any{"open": true},
		"ticket_id": "T-1",
		"notes":     []any{"a"},
	})
	snap := first[1]["snapshot"].(map[string]any)
	saved := savedValues(t, url, "st")
	if snap["ui"] == nil || snap["subagents"] != nil || snap["ticket_id"] != "T-1" || !reflect.DeepEqual(snap["notes"], []any{"a"}) {
		t.Errorf("snapshot = %v", snap)
	}
	if !reflect.DeepEqual(snap["todos"], saved["todos"]) || strings.Contains(fmt.Sprint(saved["todos"]), "forged") {
		t.Errorf("snapshot todos %v, saved todos %v: the client's copy must not win", snap["todos"], saved["todos"])
	}
	if saved["ticket_id"] != "T-1" || !reflect.DeepEqual(saved["notes"], []any{"a"}) {
		t.Fatalf("saved = %v", saved)
	}
	// Echoing the state back changes nothing; adding a note appends it.
	run("r2", clientState(t, first))
	if saved := savedValues(t, url, "st"); !reflect.DeepEqual(saved["notes"], []any{"a"}) {
		t.Fatalf("echoed notes appended again: %v", saved["notes"])
	}
	state := clientState(t, first)
	state["notes"] = []any{"a", "b"}
	run("r3", state)
	if saved := savedValues(t, url, "st"); !reflect.DeepEqual(saved["notes"], []any{"a", "b"}) {
		t.Fatalf("notes = %v, want [a b]", saved["notes"])
	}
	state["notes"] = []any{"b"}
	resp := post(t, url+"/agui/support/acme", aguiBody("st", "r4", "hi", state))
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error.Message, "state.notes is an append field") {
		t.Fatalf("dropping a note: %d %+v", resp.StatusCode, e)
	}
}

// TestAGUIDisconnectCancelsRun: a client that goes away ends its run, as
// Dawn's AG-UI endpoint does; the thread keeps the steps saved so far and
// takes the next run.
func TestAGUIDisconnectCancelsRun(t *testing.T) {
	model := &disconnectModel{
		plan:  dawntest.Script().CallTool("writeTodos", fourTodos(0)),
		reply: dawntest.Script().Reply("next run").Repeat(),
	}
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/agui/support/acme", aguiBody("gone", "r1", "hi", nil))
	r := newAGUIReader(t, resp)
	for e := r.next(t); ; e = r.next(t) {
		if e == nil {
			t.Fatal("the stream ended before the plan changed")
		}
		if e.typ() == "STATE_DELTA" {
			break
		}
	}
	resp.Body.Close()

	deadline := time.Now().Add(10 * time.Second)
	for {
		var runs []struct{ Status string }
		getJSON(t, url+"/threads/gone/runs", &runs)
		if len(runs) == 1 && runs[0].Status == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run was not cancelled after the client left: %+v", runs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	todos, _ := savedValues(t, url, "gone")["todos"].([]any)
	if len(todos) != 4 || todos[0].(map[string]any)["status"] != "in_progress" {
		t.Fatalf("saved todos after the disconnect: %v", todos)
	}
	events := readAGUI(t, post(t, url+"/agui/support/acme", aguiBody("gone", "r2", "again", nil)))
	checkRunShape(t, events, "gone", "r2")
	if !reflect.DeepEqual(events[1]["snapshot"].(map[string]any)["todos"], savedValues(t, url, "gone")["todos"]) {
		t.Errorf("the next run's snapshot is not the saved plan: %v", events[1])
	}
}

// TestAGUIBusyThread: a thread with a run in flight refuses a second run
// with 409 run_in_flight, as runs/stream does.
func TestAGUIBusyThread(t *testing.T) {
	gate := make(chan struct{})
	model := dawntest.Script().Wait(gate).Reply("done")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/agui/support/acme", aguiBody("busy", "r1", "hi", nil))
	r := newAGUIReader(t, resp)
	if e := r.next(t); e.typ() != "RUN_STARTED" {
		t.Fatalf("first event %v", e)
	}
	second := post(t, url+"/agui/support/acme", aguiBody("busy", "r2", "again", nil))
	if e := decodeErr(t, second); second.StatusCode != http.StatusConflict || e.Error.Kind != "run_in_flight" {
		t.Fatalf("second run: %d %+v", second.StatusCode, e)
	}
	close(gate)
	var last aguiEvent
	for e := r.next(t); e != nil; e = r.next(t) {
		last = e
	}
	resp.Body.Close()
	if last.typ() != "RUN_FINISHED" {
		t.Fatalf("first run ended with %v", last)
	}
}

// TestAGUIHarnessPlan: on a route whose plan the harness owns, the shared
// state shows the plan's lifecycle next to the todos, and ends equal to the
// thread's saved plan.
func TestAGUIHarnessPlan(t *testing.T) {
	h := apptest.New(t, enforcedApp(t, "", 2, "the answer is checked"), models.NewOffline(), apptest.Options{})
	url := h.Serve(t)
	events := readAGUI(t, post(t, url+"/agui/job", aguiBody("hp", "r1", "do the job", nil)))
	checkRunShape(t, events, "hp", "r1")
	snap := events[1]["snapshot"].(map[string]any)
	if plan, _ := snap["plan"].(map[string]any); plan["state"] != "draft" || len(plan["items"].([]any)) != 2 {
		t.Fatalf("snapshot plan = %v", snap["plan"])
	}
	var states []any
	for i := range events {
		if s := clientState(t, events[:i+1]); s != nil {
			if plan, _ := s["plan"].(map[string]any); len(states) == 0 || states[len(states)-1] != plan["state"] {
				states = append(states, plan["state"])
			}
		}
	}
	if !reflect.DeepEqual(states, []any{"draft", "running", "done"}) {
		t.Errorf("plan states a client saw = %v", states)
	}
	state, saved := clientState(t, events), savedValues(t, url, "hp")
	if !reflect.DeepEqual(state["todos"], saved["todos"]) {
		t.Fatalf("client todos %v\nthread todos %v", state["todos"], saved["todos"])
	}
	if last := events[len(events)-2]; last.typ() == "STATE_DELTA" {
		t.Errorf("a closing STATE_DELTA corrected the plan: %v", last)
	}
	if plan := saved["plan"].(map[string]any); plan["state"] != state["plan"].(map[string]any)["state"] {
		t.Errorf("saved plan state %v, client's %v", plan["state"], state["plan"])
	}
}

// TestAGUIKeyAndCORS: the endpoint is one more route of the API, behind
// the API key and the CORS rules.
func TestAGUIKeyAndCORS(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	api := server.New(h.Runs, server.Options{APIKey: "k3y", CORSOrigins: []string{"http://app.test"}})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)

	resp := post(t, srv.URL+"/agui/support/acme", aguiBody("auth", "r", "hi", nil))
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusUnauthorized || e.Error.Kind != "unauthorized" {
		t.Fatalf("without the key: %d %+v", resp.StatusCode, e)
	}
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/agui/%2Fsupport%2Facme%23agent", nil)
	req.Header.Set("Origin", "http://app.test")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
	pre, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pre.Body.Close()
	if pre.StatusCode/100 != 2 || pre.Header.Get("Access-Control-Allow-Origin") != "http://app.test" {
		t.Fatalf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/agui/%2Fsupport%2Facme%23agent", strings.NewReader(aguiBody("auth", "r", "hi", nil)))
	req.Header.Set("Authorization", "Bearer k3y")
	req.Header.Set("Origin", "http://app.test")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://app.test" {
		t.Errorf("no CORS header on the stream: %v", resp.Header)
	}
	checkRunShape(t, readAGUI(t, resp), "auth", "r")
}

// disconnectModel plans, then hangs until its run is cancelled; to the
// message "again" it answers at once. It decides by the conversation, not
// by call count, so that a cancel landing before the hanging call cannot
// shift its answers onto the next run.
type disconnectModel struct {
	plan, reply *dawntest.ScriptedModel
}

func (m *disconnectModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if lastUser(msgs) == "again" {
		return m.reply.GenerateContent(ctx, msgs, opts...)
	}
	for _, msg := range msgs {
		if msg.Role == llms.ChatMessageTypeTool {
			<-ctx.Done() // planned already: hang until the run is cancelled
			return nil, ctx.Err()
		}
	}
	return m.plan.GenerateContent(ctx, msgs, opts...)
}

func (m *disconnectModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// gatedModel answers each user message once the gate named by that
// message is closed (at once for a message without a gate), or ends with
// the run's cancel.
type gatedModel struct{ gates map[string]chan struct{} }

func (m *gatedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	text := lastUser(msgs)
	if g, ok := m.gates[text]; ok {
		select {
		case <-g:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "answer to " + text}}}, nil
}

func (m *gatedModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// threadRuns lists the statuses of a thread's runs, newest first.
func threadRuns(t *testing.T, url, threadID string) []string {
	var runs []struct{ Status string }
	getJSON(t, url+"/threads/"+threadID+"/runs", &runs)
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Status
	}
	return out
}

// waitRuns polls the thread's run statuses until ok accepts them.
func waitRuns(t *testing.T, url, threadID string, ok func([]string) bool) {
	deadline := time.Now().Add(10 * time.Second)
	for runs := threadRuns(t, url, threadID); !ok(runs); runs = threadRuns(t, url, threadID) {
		if time.Now().After(deadline) {
			t.Errorf("thread %s: runs %v after 10s", threadID, runs)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAGUIDisconnectSparesNewerRun: an AG-UI client leaves while its run is
// in flight, and the run ends and a newer run starts on the same thread
// before the server gets to cancel it: the cancel stops the client's own
// run, never the newer one.
func TestAGUIDisconnectSparesNewerRun(t *testing.T) {
	model := &gatedModel{gates: map[string]chan struct{}{"first": make(chan struct{}), "second": make(chan struct{})}}
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	second := make(chan []stream.Event, 1)
	hooked := make(chan struct{})
	defer agui.SetAGUIAbandonHook(func() {
		defer close(hooked)
		// The client's run ends, and a newer one starts on the thread.
		close(model.gates["first"])
		waitRuns(t, url, "race", func(runs []string) bool { return len(runs) == 1 && runs[0] == "success" })
		go func() { second <- readSSE(t, post(t, url+"/threads/race/runs/stream", runBody("/plain", "second"))) }()
		waitRuns(t, url, "race", func(runs []string) bool { return len(runs) == 2 && runs[0] == "running" })
	})()

	resp := post(t, url+"/agui/plain", aguiBody("race", "r1", "first", nil))
	if e := newAGUIReader(t, resp).next(t); e.typ() != "RUN_STARTED" {
		t.Fatalf("first AG-UI event %v, want RUN_STARTED", e)
	}
	resp.Body.Close()
	select {
	case <-hooked:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not notice the client left within 10s")
	}
	close(model.gates["second"])
	events := <-second
	if last := events[len(events)-1]; last.Type != stream.TypeDone || !strings.Contains(string(last.Data), "answer to second") {
		t.Errorf("the newer run ended with %s %s, want its answer: the client that left cancelled it", last.Type, last.Data)
	}
	if runs := threadRuns(t, url, "race"); len(runs) != 2 || runs[0] != "success" {
		t.Errorf("thread runs %v, want the newer run in success", runs)
	}
}
