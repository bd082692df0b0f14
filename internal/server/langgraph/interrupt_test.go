package langgraph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

// releases records the calls of the approve-listed releaseTool.
type releases struct {
	mu    sync.Mutex
	calls []string
}

func (r *releases) tool() capabilities.AppTool {
	return capabilities.AppTool{Tool: capabilities.Func("release", "Release a version.", func(_ context.Context, in struct {
		Version string `json:"version"`
	}) (string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls = append(r.calls, in.Version)
		return "released " + in.Version, nil
	})}
}

func (r *releases) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// serveApproval serves an app whose /ops route must have each release
// call approved.
func serveApproval(t *testing.T, model *dawntest.ScriptedModel) (string, *releases) {
	t.Helper()
	dir := writeApp(t, map[string]string{"ops/agent.md": "---\napprove: [release]\n---\nYou release."})
	r := &releases{}
	h := apptest.New(t, dir, model, apptest.Options{Tools: []capabilities.AppTool{r.tool()}})
	return h.Serve(t), r
}

// lgInterruptPart is an interrupt as LangGraph streams it.
type lgInterruptPart struct {
	ID    string `json:"id"`
	Value struct {
		InterruptID string `json:"interruptId"`
		Type        string `json:"type"`
		Kind        string `json:"kind"`
		Detail      struct {
			ToolName    string `json:"toolName"`
			ArgsPreview string `json:"argsPreview"`
		} `json:"detail"`
	} `json:"value"`
}

// interruptsIn reads {"__interrupt__": [...]} from a part's data; ok is
// false when the data has no such key.
func interruptsIn(t *testing.T, data []byte) ([]lgInterruptPart, bool) {
	t.Helper()
	var v map[string]json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, false
	}
	raw, ok := v["__interrupt__"]
	if !ok {
		return nil, false
	}
	var list []lgInterruptPart
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("__interrupt__ is not a list of interrupts: %s", raw)
	}
	return list, true
}

// errorKind reads the kind of an error response, after checking its status.
func errorKind(t *testing.T, resp *http.Response, status int) string {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, data)
	}
	var body struct {
		Error struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.Error.Kind == "" {
		t.Fatalf("not an error body: %s", data)
	}
	return body.Error.Kind + ": " + body.Error.Message
}

// lgResume is a LangGraph run request on /ops whose command resumes with
// resume (JSON).
func lgResume(resume string) string {
	return `{"assistant_id":"/ops","command":{"resume":` + resume + `},"stream_mode":["values","updates"]}`
}

type lgState struct {
	Next  []string `json:"next"`
	Tasks []struct {
		ID         string            `json:"id"`
		Name       string            `json:"name"`
		Interrupts []lgInterruptPart `json:"interrupts"`
	} `json:"tasks"`
	Status string                     `json:"status"`
	Values map[string]json.RawMessage `json:"values"`
	raw    string
}

func readState(t *testing.T, url, threadID string) lgState {
	t.Helper()
	resp, err := http.Get(url + "/threads/" + threadID + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st lgState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("state: %v in %s", err, data)
	}
	st.raw = string(data)
	return st
}

// TestLangGraphInterruptParksAndResumes: a LangGraph run that parks on a
// call needing approval ends its values with {"__interrupt__": [{value,
// id}]} after the state it saved, and its updates with the same; the
// thread's state has a pending tools task holding the interrupt, the
// thread object has it by that task's id, the run succeeded, runs/join
// answers the state with __interrupt__, and new input is 409. A run whose
// command is {"resume": "once"} runs the call and the run finishes.
func TestLangGraphInterruptParksAndResumes(t *testing.T) {
	url, rel := serveApproval(t, dawntest.Script().CallTool("release", map[string]string{"version": "1.4.2"}).Reply("Released."))
	post(t, url+"/threads", `{"thread_id":"p1"}`).Body.Close()
	resp := post(t, url+"/threads/p1/runs/stream", lgBody("/ops", "ship it", map[string]any{"stream_mode": []string{"values", "updates"}}))
	runID := resp.Header.Get("Dawn-Run-Id")
	in, last := checkParkedStream(t, readLG(t, resp))
	if len(rel.got()) != 0 {
		t.Fatal("the tool ran before anyone approved it")
	}
	st := checkParkedThread(t, url, in)
	checkParkedRun(t, url, runID, in, last)

	if kind := errorKind(t, post(t, url+"/threads/p1/runs/stream", lgBody("/ops", "again", nil)), http.StatusConflict); !strings.HasPrefix(kind, "interrupt_pending: ") || !strings.Contains(kind, in.ID) || !strings.Contains(kind, "command") {
		t.Fatalf("new input on a parked thread: %s", kind)
	}
	if after := readState(t, url, "p1"); after.raw != st.raw {
		t.Fatalf("a refused input changed the state:\n%s\n%s", st.raw, after.raw)
	}

	checkResumedStream(t, readLG(t, post(t, url+"/threads/p1/runs/stream", lgResume(`"once"`))))
	if got := rel.got(); len(got) != 1 || got[0] != "1.4.2" {
		t.Fatalf("tool calls after once: %v", got)
	}
	if st := readState(t, url, "p1"); st.Status != "idle" || len(st.Next) != 0 || len(st.Tasks) != 0 {
		t.Fatalf("the state after the resume: %s", st.raw)
	}
}

// checkParkedStream checks the stream of a run that parked on the release
// call: its last values part is the interrupt, after the state it saved,
// and its updates end with the agent's message, then the interrupt. It
// returns the interrupt and the last values part.
func checkParkedStream(t *testing.T, events []stream.Event) (lgInterruptPart, stream.Event) {
	t.Helper()
	values, updates := partsOf(events, "values"), partsOf(events, "updates")
	last := values[len(values)-1]
	list, ok := interruptsIn(t, last.Data)
	if !ok || len(list) != 1 {
		t.Fatalf("the last values part is not {\"__interrupt__\": [one]}: %s", last.Data)
	}
	in := list[0]
	if in.ID == "" || in.ID != in.Value.InterruptID || in.Value.Type != "permission-request" || in.Value.Kind != "tool" || in.Value.Detail.ToolName != "release" || !strings.Contains(in.Value.Detail.ArgsPreview, "1.4.2") {
		t.Fatalf("interrupt: %s", last.Data)
	}
	var before lgValues
	if err := json.Unmarshal(values[len(values)-2].Data, &before); err != nil {
		t.Fatal(err)
	}
	if n := len(before.Messages); n != 2 || before.Messages[1].Type != "ai" || before.Messages[1].ToolCalls[0].Name != "release" {
		t.Fatalf("the values before the interrupt are not the parked state: %s", values[len(values)-2].Data)
	}
	if got, ok := interruptsIn(t, updates[len(updates)-1].Data); !ok || len(got) != 1 || got[0].ID != in.ID {
		t.Fatalf("the last updates part is not {\"__interrupt__\": [...]}: %s", updates[len(updates)-1].Data)
	}
	if agent := updates[len(updates)-2].Data; !strings.Contains(string(agent), `"agent"`) || !strings.Contains(string(agent), `"release"`) {
		t.Fatalf("the model's message with the held-back call is not the agent's update: %s", agent)
	}
	return in, last
}

// checkParkedThread checks that thread p1, parked on interrupt in, shows
// it: its state has a pending tools task holding it, and the thread
// object (read and searched) has it by that task's id. It returns the
// state.
func checkParkedThread(t *testing.T, url string, in lgInterruptPart) lgState {
	t.Helper()
	st := readState(t, url, "p1")
	if st.Status != "interrupted" || len(st.Next) != 1 || st.Next[0] != "tools" || len(st.Tasks) != 1 || st.Tasks[0].Name != "tools" || len(st.Tasks[0].Interrupts) != 1 || st.Tasks[0].Interrupts[0].ID != in.ID {
		t.Fatalf("the parked thread's state: %s", st.raw)
	}
	var th struct {
		Status     string                       `json:"status"`
		Interrupts map[string][]lgInterruptPart `json:"interrupts"`
		Values     lgValues                     `json:"values"`
	}
	if code := getJSON(t, url+"/threads/p1", &th); code != http.StatusOK || th.Status != "interrupted" || len(th.Interrupts[st.Tasks[0].ID]) != 1 || th.Interrupts[st.Tasks[0].ID][0].ID != in.ID || len(th.Values.Messages) != 2 {
		t.Fatalf("GET /threads/p1: %d %+v", code, th)
	}
	resp := post(t, url+"/threads/search", `{"status":"interrupted"}`)
	defer resp.Body.Close()
	var found []struct {
		ThreadID   string                       `json:"thread_id"`
		Interrupts map[string][]lgInterruptPart `json:"interrupts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&found); err != nil || len(found) != 1 || found[0].ThreadID != "p1" || len(found[0].Interrupts[st.Tasks[0].ID]) != 1 {
		t.Fatalf("threads/search for interrupted threads: %+v (%v)", found, err)
	}
	return st
}

// checkParkedRun checks the parked run runID of thread p1: it succeeded,
// as LangGraph's run that reached an interrupt does; join answers the
// state with the interrupt; and a rejoin of its stream replays it from
// the store to the same last values part.
func checkParkedRun(t *testing.T, url, runID string, in lgInterruptPart, last stream.Event) {
	t.Helper()
	var run struct {
		Status string `json:"status"`
	}
	if getJSON(t, url+"/threads/p1/runs/"+runID, &run); run.Status != "success" {
		t.Fatalf("the parked run's status is %q; LangGraph's run that reached an interrupt succeeded", run.Status)
	}
	resp, err := http.Get(url + "/threads/p1/runs/" + runID + "/join")
	if err != nil {
		t.Fatal(err)
	}
	joined, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, ok := interruptsIn(t, joined); !ok || len(got) != 1 || got[0].ID != in.ID || !strings.Contains(string(joined), `"messages"`) {
		t.Fatalf("join of the parked run: %s", joined)
	}
	rejoined := partsOf(readLG(t, get(t, url+"/threads/p1/runs/"+runID+"/stream?stream_mode=values", "")), "values")
	if got := rejoined[len(rejoined)-1]; !bytes.Equal(got.Data, last.Data) {
		t.Fatalf("the rejoined stream ends with %s, want %s", got.Data, last.Data)
	}
}

// checkResumedStream checks the stream of the run that answered the
// interrupt with "once": no values part shows the answered interrupt, and
// the last holds the call's result and the model's answer.
func checkResumedStream(t *testing.T, events []stream.Event) {
	t.Helper()
	values := partsOf(events, "values")
	for _, v := range values {
		if bytes.Contains(v.Data, []byte(`"__interrupt`)) {
			t.Fatalf("a values part of the resumed run still shows the answered interrupts: %s", v.Data)
		}
	}
	final := values[len(values)-1]
	if _, ok := interruptsIn(t, final.Data); ok {
		t.Fatalf("the resumed run parked again: %s", final.Data)
	}
	var end lgValues
	if err := json.Unmarshal(final.Data, &end); err != nil {
		t.Fatal(err)
	}
	if n := len(end.Messages); n != 4 || end.Messages[2].Type != "tool" || end.Messages[2].Content != "released 1.4.2" || end.Messages[3].Content != "Released." {
		t.Fatalf("the resumed run's last values: %s", final.Data)
	}
}

// TestLangGraphResumeByID: two calls that need approval park two
// interrupts; command.resume must then be a map by interrupt id answering
// both. A single value, an unknown id and a missing id are 400 and change
// nothing; {id1: "once", id2: "deny"} on runs/wait runs one call, refuses
// the other, and answers the final state.
func TestLangGraphResumeByID(t *testing.T) {
	model := dawntest.Script().
		CallTools(dawntest.ToolCall{Name: "release", Args: map[string]string{"version": "1"}}, dawntest.ToolCall{Name: "release", Args: map[string]string{"version": "2"}}).
		Reply("One released.")
	url, rel := serveApproval(t, model)
	post(t, url+"/threads", `{"thread_id":"m1"}`).Body.Close()
	resp := post(t, url+"/threads/m1/runs/wait", lgBody("/ops", "ship both", nil))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	list, ok := interruptsIn(t, data)
	if !ok || len(list) != 2 || !strings.Contains(string(data), `"messages"`) {
		t.Fatalf("runs/wait of a run that parked on two calls: %s", data)
	}
	id1, id2 := list[0].ID, list[1].ID
	st := readState(t, url, "m1")

	for _, bad := range []struct{ resume, want string }{
		{`"once"`, "2 pending interrupts"},
		{fmt.Sprintf(`{%q:"once"}`, id1), "missing: " + id2},
		{fmt.Sprintf(`{%q:"once",%q:"once","perm-nope":"once"}`, id1, id2), `"perm-nope"`},
		{fmt.Sprintf(`{%q:"once",%q:"sometimes"}`, id1, id2), id2},
		{fmt.Sprintf(`{%q:"once",%q:null}`, id1, id2), "null"},
	} {
		kind := errorKind(t, post(t, url+"/threads/m1/runs/wait", lgResume(bad.resume)), http.StatusBadRequest)
		if !strings.HasPrefix(kind, "invalid_resume: ") || !strings.Contains(kind, bad.want) {
			t.Errorf("resume %s: %s, want it to name %q", bad.resume, kind, bad.want)
		}
		if after := readState(t, url, "m1"); after.raw != st.raw {
			t.Fatalf("resume %s changed the state", bad.resume)
		}
	}
	if len(rel.got()) != 0 {
		t.Fatal("a refused resume ran a call")
	}

	resp = post(t, url+"/threads/m1/runs/wait", lgResume(fmt.Sprintf(`{%q:"once",%q:"deny"}`, id1, id2)))
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var end lgValues
	if err := json.Unmarshal(data, &end); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("runs/wait resume: %d %s", resp.StatusCode, data)
	}
	if _, ok := interruptsIn(t, data); ok {
		t.Fatalf("the resumed run is still parked: %s", data)
	}
	if got := rel.got(); len(got) != 1 || got[0] != "1" {
		t.Fatalf("calls run: %v, want only version 1", got)
	}
	if last := end.Messages[len(end.Messages)-1]; last.Content != "One released." {
		t.Fatalf("final answer: %s", data)
	}
}

// TestLangGraphResumeRefusals: command.resume on a thread with nothing
// pending is 409 (and a stateless run with it creates no thread); other
// command fields, input beside it and an unknown decision are 400; a
// background run (POST /threads/:id/runs) with {"status":"cancelled"}
// denies the call, and join gives the final state.
func TestLangGraphResumeRefusals(t *testing.T) {
	url, rel := serveApproval(t, dawntest.Script().CallTool("release", map[string]string{"version": "3"}).Reply("Not released."))
	post(t, url+"/threads", `{"thread_id":"r1"}`).Body.Close()
	if kind := errorKind(t, post(t, url+"/threads/r1/runs/wait", lgResume(`"once"`)), http.StatusConflict); !strings.HasPrefix(kind, "no_interrupt_pending: ") {
		t.Fatalf("resume of a thread with nothing pending: %s", kind)
	}
	if kind := errorKind(t, post(t, url+"/runs/wait", lgResume(`"once"`)), http.StatusConflict); !strings.HasPrefix(kind, "no_interrupt_pending: ") {
		t.Fatalf("stateless resume: %s", kind)
	}
	var n int
	resp := post(t, url+"/threads/count", `{}`)
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil || n != 1 {
		t.Fatalf("threads after a stateless resume: %d (%v), want only r1", n, err)
	}
	resp.Body.Close()

	readLG(t, post(t, url+"/threads/r1/runs/stream", lgBody("/ops", "ship 3", nil)))
	st := readState(t, url, "r1")
	for _, bad := range []struct{ body, want string }{
		{`{"assistant_id":"/ops","command":{"resume":"once","update":{"x":1}}}`, "command.update"},
		{`{"assistant_id":"/ops","command":{"goto":"tools"}}`, "command.goto"},
		{`{"assistant_id":"/ops","command":{}}`, "command.resume is required"},
		{`{"assistant_id":"/ops","command":{"resume":"once","bogus":1}}`, "bogus"},
		{`{"assistant_id":"/ops","command":{"resume":"once"},"input":{"messages":"hi"}}`, "not both"},
		{lgResume(`"sometimes"`), `"sometimes"`},
		{lgResume(`{"status":"maybe"}`), `"maybe"`},
	} {
		kind := errorKind(t, post(t, url+"/threads/r1/runs/stream", bad.body), http.StatusBadRequest)
		if !strings.Contains(kind, bad.want) {
			t.Errorf("%s: %s, want it to name %q", bad.body, kind, bad.want)
		}
		if after := readState(t, url, "r1"); after.raw != st.raw {
			t.Fatalf("%s changed the state", bad.body)
		}
	}

	resp = post(t, url+"/threads/r1/runs", `{"assistant_id":"/ops","command":{"resume":{"status":"cancelled"}}}`)
	var run struct {
		RunID  string         `json:"run_id"`
		Kwargs map[string]any `json:"kwargs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("background resume: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if cmd, _ := json.Marshal(run.Kwargs["command"]); string(cmd) != `{"resume":{"status":"cancelled"}}` {
		t.Errorf("the run's kwargs.command: %s", cmd)
	}
	resp, err := http.Get(url + "/threads/r1/runs/" + run.RunID + "/join")
	if err != nil {
		t.Fatal(err)
	}
	var end lgValues
	if err := json.NewDecoder(resp.Body).Decode(&end); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(rel.got()) != 0 {
		t.Fatal("a cancelled interrupt ran its call")
	}
	if n := len(end.Messages); n != 4 || end.Messages[2].Type != "tool" || !strings.Contains(end.Messages[2].Content, "denied") || end.Messages[3].Content != "Not released." {
		t.Fatalf("the state after a cancel: %+v", end.Messages)
	}
}

// TestLangGraphErrorDetail: an error answered to a LangGraph-dialect
// request carries LangGraph's {"detail": message} beside Dawn's error
// object; Dawn's own requests get Dawn's shape only.
func TestLangGraphErrorDetail(t *testing.T) {
	url, _ := serveApproval(t, dawntest.Script().Reply("Hi.").Repeat())
	post(t, url+"/threads", `{"thread_id":"e1"}`).Body.Close()
	read := func(resp *http.Response) map[string]json.RawMessage {
		t.Helper()
		defer resp.Body.Close()
		var body map[string]json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	for _, req := range []struct{ path, body string }{
		{"/threads/e1/runs/wait", lgResume(`"once"`)},
		{"/runs/stream", lgResume(`"once"`)},
		{"/threads/e1/runs", `{"assistant_id":"/nowhere"}`},
		{"/assistants/search", `{"limit":"x"}`},
	} {
		body := read(post(t, url+req.path, req.body))
		var detail string
		var dawn struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body["detail"], &detail) != nil || json.Unmarshal(body["error"], &dawn) != nil || detail == "" || detail != dawn.Message {
			t.Errorf("POST %s: error body %v has no detail repeating error.message", req.path, body)
		}
	}
	if body := read(post(t, url+"/threads/e1/runs/wait", `{"route":"/nowhere"}`)); body["detail"] != nil || body["error"] == nil {
		t.Errorf("a Dawn-dialect error: %v", body)
	}
}

// TestLangGraphResumedStreamReplays: a run that resumes two held-back
// calls streams their results as one tools step, and its stream, read
// again from the store after the run ended, gives after every event id
// exactly the parts the live stream sent after it: the same message ids
// and the same state.
func TestLangGraphResumedStreamReplays(t *testing.T) {
	model := dawntest.Script().
		CallTools(dawntest.ToolCall{Name: "release", Args: map[string]string{"version": "1"}}, dawntest.ToolCall{Name: "release", Args: map[string]string{"version": "2"}}).
		Reply("Both released.")
	url, _ := serveApproval(t, model)
	post(t, url+"/threads", `{"thread_id":"r1"}`).Body.Close()
	resp := post(t, url+"/threads/r1/runs/wait", lgBody("/ops", "ship both", nil))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	list, ok := interruptsIn(t, data)
	if !ok || len(list) != 2 {
		t.Fatalf("runs/wait of a run that parked on two calls: %s", data)
	}
	body := `{"assistant_id":"/ops","command":{"resume":` + fmt.Sprintf(`{%q:"once",%q:"once"}`, list[0].ID, list[1].ID) + `},"stream_mode":["values","updates","messages-tuple"]}`
	resp = post(t, url+"/threads/r1/runs/stream", body)
	runID := resp.Header.Get("Dawn-Run-Id")
	live := readLG(t, resp)
	var tools int
	for _, p := range partsOf(live, "updates") {
		if strings.Contains(string(p.Data), `"tools"`) {
			tools++
		}
	}
	if tools != 1 {
		t.Errorf("%d tools updates for the two resumed calls, want 1", tools)
	}
	for i, p := range live {
		if p.ID == 0 {
			continue
		}
		tail := readLG(t, get(t, url+"/threads/r1/runs/"+runID+"/stream?stream_mode=values&stream_mode=updates&stream_mode=messages-tuple", strconv.FormatInt(p.ID, 10)))[1:]
		if len(tail) != len(live)-i-1 {
			t.Fatalf("after id %d: %d parts, want %d", p.ID, len(tail), len(live)-i-1)
		}
		for k, got := range tail {
			if want := live[i+1+k]; got.Type != want.Type || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("after id %d, part %d = %s %s\nwant %s %s", p.ID, k, got.Type, got.Data, want.Type, want.Data)
			}
		}
	}
}
