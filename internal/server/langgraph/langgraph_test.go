package langgraph_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/store"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/stream"
)

// lgBody is a LangGraph run request for assistant with one human message.
func lgBody(assistant, message string, extra map[string]any) string {
	b := map[string]any{"assistant_id": assistant, "input": map[string]any{"messages": []map[string]string{{"type": "human", "content": message}}}}
	for k, v := range extra {
		b[k] = v
	}
	data, _ := json.Marshal(b)
	return string(data)
}

// readLG parses a LangGraph stream: a metadata event first, then parts
// whose data is JSON, ids (where present) increasing.
func readLG(t *testing.T, resp *http.Response) []stream.Event {
	t.Helper()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	return checkLGSSE(t, body)
}

// lgMessage is the part of a message dict the tests read.
type lgMessage struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolCalls []struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Args  json.RawMessage `json:"args"`
		Input json.RawMessage `json:"input"`
		Type  string          `json:"type"`
	} `json:"tool_calls"`
}

type lgValues struct {
	Messages []lgMessage     `json:"messages"`
	Todos    []dawntest.Todo `json:"todos"`
}

func partsOf(events []stream.Event, typ string) []stream.Event {
	var out []stream.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func planModel() *dawntest.ScriptedModel {
	return dawntest.Script().
		CallTool("writeTodos", fourTodos(0)).
		CallTool("writeTodos", fourTodos(4)).
		Reply("Your account is fine.")
}

// TestLangGraphWaitingRunReconnects: a client watching a run that now
// waits for a slow model already has the state after the tools step (the
// plan its call set), and a client that reconnects with the last id it saw
// then gets exactly the parts the first stream goes on with: none twice,
// none left out.
func TestLangGraphWaitingRunReconnects(t *testing.T) {
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release)
	model := dawntest.Script().CallTool("writeTodos", fourTodos(1)).Wait(gate).Reply("Your account is fine.")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	post(t, url+"/threads", `{"thread_id":"w1"}`).Body.Close()
	resp := post(t, url+"/threads/w1/runs/stream", lgBody("/support/acme", "Help me", map[string]any{"stream_mode": []string{"values", "updates", "messages-tuple", "custom"}}))
	defer resp.Body.Close()
	// Only a guard against hanging: the state is owed without the model.
	guard := time.AfterFunc(time.Minute, func() { resp.Body.Close() })
	r := stream.NewReader(resp.Body)
	var live []stream.Event
	var last int64
	for waiting := true; waiting; {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("the stream of a waiting run never showed the plan its tools step set (%v); parts %v", err, live)
		}
		live = append(live, e)
		last = max(last, e.ID)
		var v lgValues
		waiting = e.Type != "values" || json.Unmarshal(e.Data, &v) != nil || len(v.Todos) != 4 || v.Todos[1].Status != "in_progress"
	}
	guard.Stop()
	seen := len(live)
	for live[seen-1].ID == 0 { // the rest of that event's parts
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, e)
		seen++
	}
	rejoin := get(t, url+resp.Header.Get("Location"), strconv.FormatInt(live[seen-1].ID, 10))
	release()
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, e)
	}
	tail := readLG(t, rejoin)[1:]
	want := live[seen:]
	if len(tail) != len(want) {
		t.Fatalf("reconnecting after id %d gave %d parts, want %d:\n%v\n%v", live[seen-1].ID, len(tail), len(want), names(tail), names(want))
	}
	for k, p := range tail {
		if p.Type != want[k].Type || !bytes.Equal(p.Data, want[k].Data) || p.ID != want[k].ID {
			t.Fatalf("reconnected part %d = %s %s, want %s %s", k, p.Type, p.Data, want[k].Type, want[k].Data)
		}
	}
}

func names(parts []stream.Event) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.Type
	}
	return out
}

// TestLangGraphStreamMatchesState streams a run in the LangGraph dialect:
// the stream starts with metadata naming the run that Content-Location
// names, the plan moves through values, every message id streamed is the
// id the thread's state gives that message afterwards, and the last values
// are the state.
func TestLangGraphStreamMatchesState(t *testing.T) {
	h := apptest.New(t, supportApp(t), planModel(), apptest.Options{})
	url := h.Serve(t)
	post(t, url+"/threads", `{"thread_id":"lg1"}`).Body.Close()
	resp := post(t, url+"/threads/lg1/runs/stream", lgBody("/support/acme", "Help me", map[string]any{"stream_mode": []string{"values", "updates", "messages-tuple", "custom"}}))
	events := readLG(t, resp)

	var meta struct {
		RunID   string `json:"run_id"`
		Attempt int    `json:"attempt"`
	}
	_ = json.Unmarshal(events[0].Data, &meta)
	if loc := resp.Header.Get("Content-Location"); loc != "/threads/lg1/runs/"+meta.RunID || meta.Attempt != 1 {
		t.Fatalf("Content-Location %q, metadata %s", loc, events[0].Data)
	}

	values := partsOf(events, "values")
	var first, final lgValues
	_ = json.Unmarshal(values[0].Data, &first)
	_ = json.Unmarshal(values[len(values)-1].Data, &final)
	if len(first.Messages) != 1 || first.Messages[0].Type != "human" || first.Todos[0].Status != "pending" {
		t.Errorf("first values = %s, want the input and the seed plan", values[0].Data)
	}
	if len(final.Todos) != 4 || final.Todos[3].Status != "completed" {
		t.Errorf("final todos = %+v", final.Todos)
	}
	if n := len(partsOf(events, "custom")); n != 2 {
		t.Errorf("%d custom parts, want the 2 plan_updates", n)
	}

	checkStreamedIDs(t, events, final, values[len(values)-1].Data)
	checkReconnect(t, url, resp.Header.Get("Location"), meta.RunID, events)

	var state struct {
		Values     json.RawMessage `json:"values"`
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
			Step         int    `json:"step"`
			RunID        string `json:"run_id"`
		} `json:"checkpoint"`
	}
	getJSON(t, url+"/threads/lg1/state", &state)
	if !bytes.Equal(state.Values, values[len(values)-1].Data) {
		t.Errorf("state values\n%s\nare not the last values part\n%s", state.Values, values[len(values)-1].Data)
	}
	if state.Checkpoint.CheckpointID != store.CheckpointID("lg1", 3) || state.Checkpoint.RunID != meta.RunID || state.Checkpoint.Step != 3 {
		t.Errorf("checkpoint = %+v, want the run's end at step 3", state.Checkpoint)
	}
}

// checkStreamedIDs checks the message ids of a stream: the final values'
// ids are set and distinct, every streamed message's id is among them,
// and the answer's chunks make up the answer.
func checkStreamedIDs(t *testing.T, events []stream.Event, final lgValues, finalData []byte) {
	t.Helper()
	ids := map[string]bool{}
	for _, m := range final.Messages {
		if ids[m.ID] || m.ID == "" {
			t.Fatalf("message id %q is empty or repeated in %s", m.ID, finalData)
		}
		ids[m.ID] = true
	}
	var answer strings.Builder
	for _, p := range partsOf(events, "messages") {
		var tuple []json.RawMessage
		var msg lgMessage
		if err := json.Unmarshal(p.Data, &tuple); err != nil || len(tuple) != 2 || json.Unmarshal(tuple[0], &msg) != nil {
			t.Fatalf("messages part %s is not [message, metadata]", p.Data)
		}
		if !ids[msg.ID] {
			t.Errorf("streamed message id %s is not in the final state", msg.ID)
		}
		if msg.ID == final.Messages[len(final.Messages)-1].ID {
			answer.WriteString(msg.Content)
		}
	}
	if answer.String() != "Your account is fine." {
		t.Errorf("the answer's chunks say %q", answer.String())
	}
}

// checkReconnect checks that the SDK's reconnection to loc (the stream's
// Location) with the first id it saw continues the stream of run runID in
// the same modes.
func checkReconnect(t *testing.T, url, loc, runID string, events []stream.Event) {
	t.Helper()
	if !strings.HasPrefix(loc, "/threads/lg1/runs/"+runID+"/stream?") {
		t.Fatalf("Location %q", loc)
	}
	var cut int
	for i, e := range events {
		if e.ID != 0 {
			cut = i
			break
		}
	}
	tail := readLG(t, get(t, url+loc, strconv.FormatInt(events[cut].ID, 10)))[1:]
	if len(tail) != len(events)-cut-1 {
		t.Fatalf("reconnecting after id %d gave %d parts, want %d", events[cut].ID, len(tail), len(events)-cut-1)
	}
	for k, p := range tail {
		if want := events[cut+1+k]; p.Type != want.Type || !bytes.Equal(p.Data, want.Data) {
			t.Fatalf("reconnected part %d = %s, want %s", k, p.Type, want.Type)
		}
	}
}

// TestLangGraphDialectByBody: the same endpoints speak Dawn for a body
// with route and LangGraph for one with assistant_id alone.
func TestLangGraphDialectByBody(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hi.").Repeat(), apptest.Options{})
	url := h.Serve(t)
	tests := []struct {
		name, body string
		langGraph  bool
	}{
		{"route", runBody("/plain", "hi"), false},
		{"assistant_id", lgBody("/plain", "hi", map[string]any{"if_not_exists": "create"}), true},
		{"both", `{"route":"/plain","assistant_id":"/plain","input":{"messages":[{"role":"user","content":"hi"}]}}`, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, url+"/threads/d"+strconv.Itoa(i)+"/runs/stream", tt.body)
			var first string
			if tt.langGraph {
				first = readLG(t, resp)[0].Type
			} else {
				first = readSSE(t, resp)[0].Type
			}
			if (first == "metadata") != tt.langGraph {
				t.Errorf("first event %q; want the LangGraph dialect: %v", first, tt.langGraph)
			}
			wait := post(t, url+"/threads/d"+strconv.Itoa(i)+"/runs/wait", tt.body)
			var out map[string]json.RawMessage
			_ = json.NewDecoder(wait.Body).Decode(&out)
			wait.Body.Close()
			var msgs []lgMessage
			_ = json.Unmarshal(out["messages"], &msgs)
			if len(msgs) == 0 || (msgs[0].Type == "human") != tt.langGraph {
				t.Errorf("runs/wait messages %s; LangChain types only in the LangGraph dialect", out["messages"])
			}
		})
	}
}

// TestLangGraphResumeFromEveryEvent joins a finished run's stream after
// each event id it carries: the parts that follow are exactly the full
// stream's parts after that id.
func TestLangGraphResumeFromEveryEvent(t *testing.T) {
	h := apptest.New(t, supportApp(t), planModel(), apptest.Options{})
	url := h.Serve(t)
	var run struct {
		RunID string `json:"run_id"`
	}
	resp := post(t, url+"/threads/r1/runs", lgBody("/support/acme", "Help me", map[string]any{"if_not_exists": "create", "stream_mode": []string{"values", "updates", "messages-tuple", "custom"}}))
	_ = json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	join := url + "/threads/r1/runs/" + run.RunID
	var joined json.RawMessage
	if code := getJSON(t, join+"/join", &joined); code != http.StatusOK {
		t.Fatalf("join: %d %s", code, joined)
	}
	var again json.RawMessage // the run has ended: from the store
	if code := getJSON(t, join+"/join", &again); code != http.StatusOK || !bytes.Equal(again, joined) {
		t.Fatalf("join after the end: %d %s, want %s", code, again, joined)
	}
	full := readLG(t, get(t, join+"/stream?cancel_on_disconnect=0", ""))
	if !bytes.Equal(full[len(full)-1].Data, joined) {
		t.Fatalf("the stream's last part is not what join answered")
	}
	checked := 0
	for i, e := range full {
		if e.ID == 0 {
			continue
		}
		tail := readLG(t, get(t, join+"/stream?cancel_on_disconnect=0", strconv.FormatInt(e.ID, 10)))[1:]
		want := full[i+1:]
		if len(tail) != len(want) {
			t.Fatalf("after id %d: %d parts, want %d", e.ID, len(tail), len(want))
		}
		for k := range tail {
			if tail[k].Type != want[k].Type || !bytes.Equal(tail[k].Data, want[k].Data) {
				t.Fatalf("after id %d, part %d is %s %s, want %s %s", e.ID, k, tail[k].Type, tail[k].Data, want[k].Type, want[k].Data)
			}
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("only %d parts carried an id", checked)
	}
}

// get sends a GET with Last-Event-ID when lastEventID is set.
func get(t *testing.T, url, lastEventID string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestLangGraphBadRuns: requests the dialect cannot honour are 4xx naming
// what to change, and start nothing.
func TestLangGraphBadRuns(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hi.").Repeat(), apptest.Options{})
	url := h.Serve(t)
	post(t, url+"/threads", `{"thread_id":"bad"}`).Body.Close()
	tests := []struct {
		name, body, kind, says string
		status                 int
	}{
		{"no assistant", `{"input":{"messages":"hi"},"assistant_id":""}`, "invalid_body", "assistant_id is required", 400},
		{"unknown assistant", lgBody("/nowhere", "hi", nil), "assistant_not_found", `No assistant found for "/nowhere"`, 404},
		{"command with input", lgBody("/plain", "hi", map[string]any{"command": map[string]any{"resume": 1}}), "invalid_body", "not both", 400},
		{"interrupt_before", lgBody("/plain", "hi", map[string]any{"interrupt_before": []string{"nowhere"}}), "invalid_body", `interrupt_before[0] "nowhere" is not a node of the agent graph`, 400},
		{"multitask", lgBody("/plain", "hi", map[string]any{"multitask_strategy": "later"}), "invalid_body", "multitask_strategy must be one of reject, interrupt, rollback, enqueue", 400},
		{"after_seconds", lgBody("/plain", "hi", map[string]any{"after_seconds": -1}), "invalid_body", "after_seconds must be 0 or more", 400},
		{"after_seconds overflow", lgBody("/plain", "hi", map[string]any{"after_seconds": 1e10}), "invalid_body", "after_seconds must be at most 31536000", 400},
		{"after_seconds past a year", lgBody("/plain", "hi", map[string]any{"after_seconds": 31536001}), "invalid_body", "after_seconds must be at most 31536000", 400},
		{"stream mode", lgBody("/plain", "hi", map[string]any{"stream_mode": "everything"}), "invalid_body", `stream_mode "everything"`, 400},
		{"stream modes named", lgBody("/plain", "hi", map[string]any{"stream_mode": []string{"values", "all"}}), "invalid_body", "use values, updates, messages-tuple, messages, custom, tasks, checkpoints, debug or events", 400},
		{"image", `{"assistant_id":"/plain","input":{"messages":[{"type":"human","content":[{"type":"image_url"}]}]}}`, "invalid_body", "text only", 400},
		{"ai input", `{"assistant_id":"/plain","input":{"messages":[{"type":"ai","content":"x"}]}}`, "invalid_input", "must be user or system", 400},
		{"no thread", lgBody("/plain", "hi", nil), "thread_not_found", "if_not_exists", 404},
		{"unknown checkpoint", lgBody("/plain", "hi", map[string]any{"checkpoint_id": "nope"}), "checkpoint_not_found", "has no checkpoint", 404},
		{"metadata", lgBody("/plain", "hi", map[string]any{"metadata": []int{1}}), "invalid_body", "metadata must be a JSON object", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			thread := "bad"
			if tt.name == "no thread" {
				thread = "missing"
			}
			resp := post(t, url+"/threads/"+thread+"/runs/wait", tt.body)
			e := decodeErr(t, resp)
			if resp.StatusCode != tt.status || e.Error.Kind != tt.kind || !strings.Contains(e.Error.Message, tt.says) {
				t.Errorf("status %d %s %q; want %d %s saying %q", resp.StatusCode, e.Error.Kind, e.Error.Message, tt.status, tt.kind, tt.says)
			}
		})
	}
	var runs []any
	getJSON(t, url+"/threads/bad/runs", &runs)
	if len(runs) != 0 {
		t.Errorf("refused requests started %d runs", len(runs))
	}
}

// TestLangGraphStateShape: GET /threads/:id/state is Dawn's shape and the
// LangGraph ThreadState at once, messages in both forms, and a failed run
// shows as a failed task.
func TestLangGraphStateShape(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hi.").Fail(errors.New("the model is down")), apptest.Options{})
	url := h.Serve(t)
	readSSE(t, post(t, url+"/threads/s1/runs/stream", runBody("/plain", "hello")))
	var state map[string]json.RawMessage
	getJSON(t, url+"/threads/s1/state", &state)
	for _, key := range []string{"values", "next", "config", "metadata", "created_at", "parent_config", "tasks", "checkpoint", "parent_checkpoint", "thread_id", "status", "updated_at"} {
		if _, ok := state[key]; !ok {
			t.Errorf("state has no %q: %s", key, mustMarshalJSON(state))
		}
	}
	var values lgValues
	_ = json.Unmarshal(state["values"], &values)
	if len(values.Messages) != 2 || values.Messages[0].Role != "user" || values.Messages[0].Type != "human" || values.Messages[1].Role != "assistant" || values.Messages[1].Type != "ai" || values.Messages[1].ID == "" {
		t.Errorf("messages = %s", state["values"])
	}

	resp := post(t, url+"/threads/s1/runs/wait", runBody("/plain", "again"))
	resp.Body.Close()
	var failed struct {
		Status string `json:"status"`
		Tasks  []struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		} `json:"tasks"`
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	getJSON(t, url+"/threads/s1/state", &failed)
	if failed.Status != "error" || len(failed.Tasks) != 1 || !strings.Contains(failed.Tasks[0].Error, "the model is down") {
		t.Errorf("after a failed run: %+v", failed)
	}
	var history []json.RawMessage
	resp = post(t, url+"/threads/s1/history", `{}`)
	_ = json.NewDecoder(resp.Body).Decode(&history)
	resp.Body.Close()
	if len(history) != 3 {
		t.Errorf("history has %d checkpoints, want the first run's end, its input applied and before it (the failed run saved no step)", len(history))
	}
}

func mustMarshalJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestLangGraphAPIKeyHeader: with an API key the LangGraph SDK's
// X-Api-Key header is accepted like Authorization: Bearer.
func TestLangGraphAPIKeyHeader(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hi."), apptest.Options{})
	srv := server.New(h.Runs, server.Options{APIKey: "sekret"})
	tests := []struct {
		header, value string
		want          int
	}{
		{"", "", http.StatusUnauthorized},
		{"X-Api-Key", "wrong", http.StatusUnauthorized},
		{"X-Api-Key", "sekret", http.StatusOK},
		{"Authorization", "Bearer sekret", http.StatusOK},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, "/assistants/search", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json") // as the SDK sends it
		if tt.header != "" {
			req.Header.Set(tt.header, tt.value)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: %q: status %d, want %d", tt.header, tt.value, rec.Code, tt.want)
		}
	}
}

// TestLangGraphMultitaskInterrupt: a run with multitask_strategy interrupt
// cancels the run in flight and starts; reject answers 409; the client
// waiting on the cancelled run gets the thread's state.
func TestLangGraphMultitaskInterrupt(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	model := dawntest.Script().Wait(hold).Reply("first").Reply("second")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	firstAnswer := make(chan []byte, 1)
	go func() {
		resp, err := http.Post(url+"/threads/m1/runs/wait", "application/json", strings.NewReader(lgBody("/plain", "one", map[string]any{"if_not_exists": "create"})))
		if err != nil {
			firstAnswer <- []byte(err.Error())
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		firstAnswer <- data
	}()
	for i := 0; model.Calls() == 0; i++ { // the first run is at its model call
		if i > 10000 {
			t.Fatal("the first run never called the model")
		}
		time.Sleep(time.Millisecond)
	}
	resp := post(t, url+"/threads/m1/runs", lgBody("/plain", "two", map[string]any{"multitask_strategy": "reject"}))
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusConflict || e.Error.Kind != "run_in_flight" {
		t.Fatalf("reject: %d %+v", resp.StatusCode, e)
	}
	resp = post(t, url+"/threads/m1/runs/wait", lgBody("/plain", "two", map[string]any{"multitask_strategy": "interrupt"}))
	var out lgValues
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if n := len(out.Messages); n == 0 || out.Messages[n-1].Content != "second" {
		t.Fatalf("interrupting run answered %+v", out)
	}
	// (The interrupted run saved no step, so the state it answers with is
	// whatever the thread holds when it reads it.)
	var first map[string]json.RawMessage
	data := <-firstAnswer
	if err := json.Unmarshal(data, &first); err != nil || first["messages"] == nil || first["cancelled"] != nil {
		t.Errorf("the interrupted run's runs/wait answered %s, want the thread's state", data)
	}
	var runs []struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	getJSON(t, url+"/threads/m1/runs?limit=10&offset=0", &runs)
	if len(runs) != 2 || runs[0].Status != "success" || runs[1].Status != "interrupted" {
		t.Fatalf("runs = %+v", runs)
	}
	var joined lgValues // a cancelled run's join answers with the thread's state
	if code := getJSON(t, url+"/threads/m1/runs/"+runs[1].RunID+"/join", &joined); code != http.StatusOK || len(joined.Messages) != len(out.Messages) {
		t.Errorf("join of the interrupted run: %d %+v", code, joined)
	}
}

// TestLangGraphAssistantIDs: an assistant is named by its UUID, its route
// id (with or without Dawn's #agent and the leading slash) or a concrete
// path, percent-encoded or not.
func TestLangGraphAssistantIDs(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	var all []struct {
		AssistantID string `json:"assistant_id"`
		GraphID     string `json:"graph_id"`
	}
	resp := post(t, url+"/assistants/search", `{"graph_id":"/support/[tenant]"}`)
	_ = json.NewDecoder(resp.Body).Decode(&all)
	resp.Body.Close()
	if len(all) != 1 {
		t.Fatalf("search by graph_id: %+v", all)
	}
	id := all[0].AssistantID
	tests := []struct {
		path   string
		status int
	}{
		{id, 200},
		{"%2Fsupport%2F%5Btenant%5D", 200},
		{"%2Fsupport%2F%5Btenant%5D%23agent", 200},
		{"support%2F%5Btenant%5D", 200},
		{"%2Fsupport%2Facme", 200},
		{"00000000-0000-0000-0000-000000000000", 404},
		{"%2Fnowhere", 404},
		{"%2F..%2Fetc", 404},
	}
	for _, tt := range tests {
		var got struct {
			AssistantID string `json:"assistant_id"`
		}
		code := getJSON(t, url+"/assistants/"+tt.path, &got)
		if code != tt.status || (code == 200 && got.AssistantID != id) {
			t.Errorf("GET /assistants/%s: %d %s, want %d %s", tt.path, code, got.AssistantID, tt.status, id)
		}
	}
	var schemas struct {
		ContextSchema struct {
			Properties map[string]any `json:"properties"`
		} `json:"context_schema"`
	}
	getJSON(t, url+"/assistants/"+id+"/schemas", &schemas)
	if _, ok := schemas.ContextSchema.Properties["tenant"]; !ok {
		t.Errorf("context schema %+v has no tenant", schemas.ContextSchema)
	}
}

var checkLGSSE = apptest.CheckLGSSE

// TestLangGraphRejoinOpensWithStateOnlyFromStart: the SDK's
// runs.joinStream sends lastEventId as Last-Event-ID. Joined with "-1" or
// with none, the stream opens with the state the run started from (an
// id-less values part); joined after a given id, 0 included, it carries
// only the parts after that id, so a UI that shows later state does not
// step back. (Raw HTTP with the header the SDK sends: the SDK's node
// harness is not needed to send one header.)
func TestLangGraphRejoinOpensWithStateOnlyFromStart(t *testing.T) {
	h := apptest.New(t, supportApp(t), planModel(), apptest.Options{})
	url := h.Serve(t)
	var run struct {
		RunID string `json:"run_id"`
	}
	resp := post(t, url+"/threads/j1/runs", lgBody("/support/acme", "Help me", map[string]any{"if_not_exists": "create", "stream_mode": []string{"values"}}))
	_ = json.NewDecoder(resp.Body).Decode(&run)
	resp.Body.Close()
	join := url + "/threads/j1/runs/" + run.RunID
	var joined json.RawMessage
	if code := getJSON(t, join+"/join", &joined); code != http.StatusOK {
		t.Fatalf("join: %d %s", code, joined)
	}
	stream := join + "/stream?cancel_on_disconnect=0" // as the SDK sends it
	full := readLG(t, get(t, stream, ""))[1:]
	if len(full) < 2 || full[0].Type != "values" || full[0].ID != 0 {
		t.Fatalf("joined from the start, the stream opens with %+v, want the id-less values of the start", full)
	}
	if again := readLG(t, get(t, stream, "-1"))[1:]; len(again) != len(full) {
		t.Errorf("joined with Last-Event-ID -1: %d parts, want the %d of the start", len(again), len(full))
	}
	for _, id := range []string{"0", "1"} {
		tail := readLG(t, get(t, stream, id))[1:]
		if len(tail) > 0 && tail[0].ID == 0 && tail[0].Type == "values" && len(tail) == len(full) {
			t.Errorf("joined after id %s, the stream opens with the start's state again: %s", id, tail[0].Data)
		}
		for _, p := range tail {
			if p.ID != 0 && p.ID <= mustAtoi(t, id) {
				t.Errorf("joined after id %s, part %s has id %d", id, p.Type, p.ID)
			}
		}
		if id == "0" && len(tail) != len(full)-1 {
			t.Errorf("joined after id 0: %d parts, want every part but the opening state (%d)", len(tail), len(full)-1)
		}
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
