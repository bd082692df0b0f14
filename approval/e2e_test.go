package approval_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// deploys records the calls of the deployProd tool.
type deploys struct {
	mu    sync.Mutex
	calls []deployIn
}

type deployIn struct {
	Env     string `json:"env" jsonschema:"the environment"`
	Version string `json:"version"`
}

func (d *deploys) tool() capabilities.AppTool {
	return capabilities.AppTool{Tool: capabilities.Func("deployProd", "Deploy a version.", func(_ context.Context, in deployIn) (string, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.calls = append(d.calls, in)
		return "deployed " + in.Version + " to " + in.Env, nil
	})}
}

func (d *deploys) got() []deployIn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]deployIn(nil), d.calls...)
}

func writeApp(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func opsApp(t *testing.T, extra map[string]string) string {
	files := map[string]string{"ops/agent.md": "---\napprove: [deployProd]\n---\nYou deploy."}
	for k, v := range extra {
		files[k] = v
	}
	return writeApp(t, files)
}

// serve serves the app on a loopback port; storePath "" is in memory.
func serve(t *testing.T, dir string, model llms.Model, d *deploys, storePath string) (string, *apptest.Harness) {
	t.Helper()
	h := apptest.New(t, dir, model, apptest.Options{Tools: []capabilities.AppTool{d.tool()}, StorePath: storePath})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	return srv.URL, h
}

var post = apptest.PostJSON

// readSSE reads an SSE response to its end.
var readSSE = apptest.ReadSSE

func runBody(message string) string {
	b, _ := json.Marshal(map[string]any{"route": "/ops", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": message}}}})
	return string(b)
}

type interrupt struct {
	ID     string `json:"interruptId"`
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	CallID string `json:"callId"`
	Detail struct {
		ToolName         string `json:"toolName"`
		ArgsPreview      string `json:"argsPreview"`
		SuggestedPattern string `json:"suggestedPattern"`
	} `json:"detail"`
}

// park starts a run that calls deployProd and returns its interrupt, after
// checking that the stream ends parked and the tool did not run.
func park(t *testing.T, url, threadID string, d *deploys) interrupt {
	t.Helper()
	events := readSSE(t, post(t, url+"/threads/"+threadID+"/runs/stream", runBody("ship 1.4.2")))
	types := dawntest.Types(events)
	if got := strings.Join(types, ","); !strings.HasSuffix(got, "tool_call,interrupt,done") {
		t.Fatalf("events of a parked run: %s", got)
	}
	var in interrupt
	if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
		t.Fatal(err)
	}
	if in.Type != "permission-request" || in.Kind != "tool" || in.Detail.ToolName != "deployProd" || in.Detail.SuggestedPattern != "deployProd" || !strings.Contains(in.Detail.ArgsPreview, `"1.4.2"`) || in.ID == "" {
		t.Fatalf("interrupt: %s", events[len(events)-2].Data)
	}
	var done struct {
		Output struct {
			Interrupted bool        `json:"interrupted"`
			Interrupts  []interrupt `json:"interrupts"`
		} `json:"output"`
	}
	if err := json.Unmarshal(events[len(events)-1].Data, &done); err != nil || !done.Output.Interrupted || len(done.Output.Interrupts) != 1 {
		t.Fatalf("done of a parked run: %s", events[len(events)-1].Data)
	}
	if n := len(d.got()); n != 0 {
		t.Fatalf("deployProd ran %d times before anyone approved it", n)
	}
	st := state(t, url, threadID)
	if st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID {
		t.Fatalf("state of a parked thread: status %q, interrupts %+v", st.Status, st.Interrupts)
	}
	return in
}

type threadState struct {
	Status     string                     `json:"status"`
	Interrupts []interrupt                `json:"interrupts"`
	Values     map[string]json.RawMessage `json:"values"`
	raw        string
}

func state(t *testing.T, url, threadID string) threadState {
	t.Helper()
	resp, err := http.Get(url + "/threads/" + threadID + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st threadState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("state: %v in %s", err, data)
	}
	st.raw = string(data)
	return st
}

func resumeBody(id, status, payload string) string {
	if payload == "" {
		return fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%q,"status":%q}]}`, id, status)
	}
	return fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%q,"status":%q,"payload":%s}]}`, id, status, payload)
}

// resume answers and returns the continuation's events.
func resume(t *testing.T, url, threadID, body string) []stream.Event {
	t.Helper()
	return readSSE(t, post(t, url+"/threads/"+threadID+"/resume", body))
}

func finalAnswer(t *testing.T, events []stream.Event) string {
	t.Helper()
	last := events[len(events)-1]
	var done struct {
		Output struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"output"`
	}
	if err := json.Unmarshal(last.Data, &done); err != nil || len(done.Output.Messages) == 0 {
		t.Fatalf("done: %s", last.Data)
	}
	return done.Output.Messages[len(done.Output.Messages)-1].Content
}

// toolMessage is the text the model got as the result of the first tool
// call, from its last request.
func toolMessage(t *testing.T, m *dawntest.ScriptedModel) string {
	t.Helper()
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	for _, msg := range last {
		for _, p := range msg.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				return r.Content
			}
		}
	}
	t.Fatal("the model got no tool result")
	return ""
}

func deployScript() *dawntest.ScriptedModel {
	return dawntest.Script().CallTool("deployProd", map[string]string{"env": "prod", "version": "1.4.2"}).Reply("done")
}

// TestApproveOnce: a call of an approve-listed tool parks the run; resuming
// with "once" runs it and the run finishes; the next call asks again.
func TestApproveOnce(t *testing.T) {
	d := &deploys{}
	model := deployScript().CallTool("deployProd", map[string]string{"env": "prod", "version": "1.4.3"}).Reply("done again")
	url, _ := serve(t, opsApp(t, nil), model, d, "")
	in := park(t, url, "t1", d)
	events := resume(t, url, "t1", resumeBody(in.ID, "resolved", `"once"`))
	if got := strings.Join(dawntest.Types(events), ","); !strings.HasPrefix(got, "tool_result,") || !strings.HasSuffix(got, ",done") {
		t.Fatalf("events of the continuation: %s", got)
	}
	if answer := finalAnswer(t, events); answer != "done" {
		t.Fatalf("final answer %q", answer)
	}
	if got := d.got(); len(got) != 1 || got[0].Env != "prod" {
		t.Fatalf("deployProd calls: %+v", got)
	}
	if st := state(t, url, "t1"); st.Status != "idle" || len(st.Interrupts) != 0 || st.Values["__interrupts"] != nil {
		t.Fatalf("state after the resume: %s", st.raw)
	}
	// "once" is for this call only: the next run asks again.
	events = readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("ship 1.4.3")))
	if types := dawntest.Types(events); types[len(types)-2] != "interrupt" {
		t.Fatalf("second deploy after \"once\" did not ask: %v", types)
	}
}

// TestApproveAlways: "always" runs the call and every later call of the tool
// on any thread without asking, and is kept in the store across a restart.
func TestApproveAlways(t *testing.T) {
	d := &deploys{}
	dir := opsApp(t, nil)
	db := filepath.Join(t.TempDir(), "dawn.db")
	url, _ := serve(t, dir, deployScript(), d, db)
	in := park(t, url, "t1", d)
	resume(t, url, "t1", resumeBody(in.ID, "resolved", `"always"`))
	// A new server on the same store: another thread's call runs at once.
	url2, _ := serve(t, dir, deployScript(), d, db)
	events := readSSE(t, post(t, url2+"/threads/t2/runs/stream", runBody("ship again")))
	if got := strings.Join(dawntest.Types(events), ","); strings.Contains(got, "interrupt") || !strings.HasSuffix(got, "done") {
		t.Fatalf("a call after \"always\" asked again: %s", got)
	}
	if n := len(d.got()); n != 2 {
		t.Fatalf("deployProd ran %d times, want 2", n)
	}
}

// TestApproveDeny: "deny" (and a cancelled answer) do not run the tool; the
// model gets the denial as the tool's result and answers.
func TestApproveDeny(t *testing.T) {
	for _, answer := range []struct{ status, payload string }{{"resolved", `"deny"`}, {"cancelled", ""}} {
		t.Run(answer.status, func(t *testing.T) {
			d := &deploys{}
			model := deployScript()
			url, _ := serve(t, opsApp(t, nil), model, d, "")
			in := park(t, url, "t1", d)
			events := resume(t, url, "t1", resumeBody(in.ID, answer.status, answer.payload))
			if answer := finalAnswer(t, events); answer != "done" {
				t.Fatalf("final answer %q", answer)
			}
			if n := len(d.got()); n != 0 {
				t.Fatalf("a denied deployProd ran %d times", n)
			}
			if text := toolMessage(t, model); !strings.Contains(text, "denied") {
				t.Fatalf("the model got %q as the denied call's result", text)
			}
		})
	}
}

// TestApproveEdit: an edit runs the call with the person's arguments.
func TestApproveEdit(t *testing.T) {
	d := &deploys{}
	url, _ := serve(t, opsApp(t, nil), deployScript(), d, "")
	in := park(t, url, "t1", d)
	resume(t, url, "t1", resumeBody(in.ID, "resolved", `{"decision":"edit","args":{"env":"staging","version":"1.4.2"}}`))
	if got := d.got(); len(got) != 1 || got[0].Env != "staging" {
		t.Fatalf("deployProd calls after an edit: %+v", got)
	}
}

// TestResumeRejectsBadBodies: every malformed resume is a 400 naming what is
// wrong, and leaves the parked thread exactly as it was; a new message on
// it is a 409 interrupt_pending.
func TestResumeRejectsBadBodies(t *testing.T) {
	d := &deploys{}
	url, _ := serve(t, opsApp(t, nil), deployScript(), d, "")
	in := park(t, url, "t1", d)
	before := state(t, url, "t1").raw
	cases := []struct {
		name, body, want string
	}{
		{"unknown field", `{"route":"/ops","resume":[],"extra":1}`, "extra"},
		{"unknown answer field", fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%q,"status":"resolved","payload":"once","note":1}]}`, in.ID), "note"},
		{"missing route", fmt.Sprintf(`{"resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, in.ID), "route"},
		{"missing answer", `{"route":"/ops","resume":[]}`, in.ID},
		{"unknown id", `{"route":"/ops","resume":[{"interruptId":"perm-nope","status":"resolved","payload":"once"}]}`, "perm-nope"},
		{"twice", fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%[1]q,"status":"resolved","payload":"once"},{"interruptId":%[1]q,"status":"resolved","payload":"once"}]}`, in.ID), "twice"},
		{"bad status", resumeBody(in.ID, "approved", `"once"`), "approved"},
		{"bad decision", resumeBody(in.ID, "resolved", `"sure"`), "sure"},
		{"no payload", resumeBody(in.ID, "resolved", ""), "payload"},
		{"cancelled with payload", resumeBody(in.ID, "cancelled", `"once"`), "payload"},
		{"edit off schema", resumeBody(in.ID, "resolved", `{"decision":"edit","args":{"env":1}}`), "schema"},
		{"wrong route", fmt.Sprintf(`{"route":"/other","resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, in.ID), "/other"},
	}
	for _, c := range cases {
		resp := post(t, url+"/threads/t1/resume", c.body)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 4 || !strings.Contains(string(data), c.want) {
			t.Errorf("%s: status %d, body %s (want a 4xx naming %q)", c.name, resp.StatusCode, data, c.want)
		}
	}
	resp := post(t, url+"/threads/t1/runs/wait", runBody("something else"))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(data), "interrupt_pending") {
		t.Fatalf("new message on a parked thread: %d %s", resp.StatusCode, data)
	}
	if after := state(t, url, "t1").raw; after != before {
		t.Fatalf("rejected requests changed the thread:\nbefore %s\nafter  %s", before, after)
	}
	if n := len(d.got()); n != 0 {
		t.Fatalf("deployProd ran %d times", n)
	}
	// The thread still resumes.
	resume(t, url, "t1", resumeBody(in.ID, "resolved", `"once"`))
	if n := len(d.got()); n != 1 {
		t.Fatalf("deployProd ran %d times after the resume", n)
	}
	// Nothing is pending any more.
	resp = post(t, url+"/threads/t1/resume", resumeBody(in.ID, "resolved", `"once"`))
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("resume with nothing pending: %d", resp.StatusCode)
	}
	// A resume of a thread that does not exist creates none.
	resp = post(t, url+"/threads/nope/resume", resumeBody(in.ID, "resolved", `"once"`))
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("resume of an unknown thread: %d", resp.StatusCode)
	}
	if resp, err := http.Get(url + "/threads/nope"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a refused resume left thread nope behind: %v %v", resp.StatusCode, err)
	}
}

// TestResumeAfterRestart: a run parked by one server is resumed by another
// that opened the same store file, and finishes.
func TestResumeAfterRestart(t *testing.T) {
	d := &deploys{}
	dir := opsApp(t, nil)
	db := filepath.Join(t.TempDir(), "dawn.db")
	url, h := serve(t, dir, deployScript(), d, db)
	in := park(t, url, "t1", d)
	h.Runs.Shutdown(context.Background())
	if err := h.Store.Close(); err != nil {
		t.Fatal(err)
	}
	// The second server's model goes on from the tool's result.
	url2, _ := serve(t, dir, dawntest.Script().Reply("deployed after restart"), d, db)
	if st := state(t, url2, "t1"); st.Status != "interrupted" || len(st.Interrupts) != 1 {
		t.Fatalf("state after the restart: %s", st.raw)
	}
	events := resume(t, url2, "t1", resumeBody(in.ID, "resolved", `"once"`))
	if answer := finalAnswer(t, events); answer != "deployed after restart" {
		t.Fatalf("final answer %q", answer)
	}
	if got := d.got(); len(got) != 1 || got[0].Version != "1.4.2" {
		t.Fatalf("deployProd calls: %+v", got)
	}
}

// TestPermissionsModes: non-interactive denies what needs approval, bypass
// runs it, and deny in dawn.yaml wins over allow.
func TestPermissionsModes(t *testing.T) {
	cases := []struct {
		name, yaml string
		runs       int
	}{
		{"non-interactive", "permissions:\n  mode: non-interactive\n", 0},
		{"bypass", "permissions:\n  mode: bypass\n", 1},
		{"allow", "permissions:\n  allow: {tool: [deployProd]}\n", 1},
		{"deny wins", "permissions:\n  allow: {tool: [deployProd]}\n  deny: {tool: [deployProd]}\n", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &deploys{}
			url, _ := serve(t, opsApp(t, map[string]string{"dawn.yaml": c.yaml}), deployScript(), d, "")
			events := readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("ship")))
			if got := strings.Join(dawntest.Types(events), ","); strings.Contains(got, "interrupt") || !strings.HasSuffix(got, "done") {
				t.Fatalf("events: %s", got)
			}
			if n := len(d.got()); n != c.runs {
				t.Fatalf("deployProd ran %d times, want %d", n, c.runs)
			}
		})
	}
}

// TestSeveralCallsInOneTurn: of one turn's calls, those that need no
// approval run at once and each one that does raises its own interrupt;
// runs/wait answers with the state holding both, and the resume must
// answer both at once.
func TestSeveralCallsInOneTurn(t *testing.T) {
	d := &deploys{}
	var looked int
	lookup := capabilities.AppTool{Tool: capabilities.Func("lookup", "Look up the current version.", func(context.Context, struct{}) (string, error) {
		looked++
		return "1.4.1", nil
	})}
	model := dawntest.Script().CallTools(
		dawntest.ToolCall{Name: "deployProd", Args: map[string]string{"env": "prod", "version": "1.4.2"}},
		dawntest.ToolCall{Name: "lookup", Args: map[string]string{}},
		dawntest.ToolCall{Name: "deployProd", Args: map[string]string{"env": "staging", "version": "1.4.2"}},
	).Reply("done")
	h := apptest.New(t, opsApp(t, nil), model, apptest.Options{Tools: []capabilities.AppTool{d.tool(), lookup}})
	srv := httptest.NewServer(h.API)
	defer srv.Close()
	resp := post(t, srv.URL+"/threads/t1/runs/wait", runBody("ship it everywhere"))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var values struct {
		Interrupts []interrupt `json:"__interrupts"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &values) != nil || len(values.Interrupts) != 2 {
		t.Fatalf("runs/wait of a parked run: %d %s", resp.StatusCode, data)
	}
	if looked != 1 || len(d.got()) != 0 {
		t.Fatalf("before the resume: lookup ran %d times, deployProd %d", looked, len(d.got()))
	}
	first, second := values.Interrupts[0], values.Interrupts[1]
	resp = post(t, srv.URL+"/threads/t1/resume", resumeBody(first.ID, "resolved", `"once"`))
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), second.ID) {
		t.Fatalf("a resume that answers one of two: %d %s", resp.StatusCode, data)
	}
	body := fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%q,"status":"cancelled"},{"interruptId":%q,"status":"resolved","payload":"once"}]}`, second.ID, first.ID)
	events := resume(t, srv.URL, "t1", body)
	if answer := finalAnswer(t, events); answer != "done" {
		t.Fatalf("final answer %q", answer)
	}
	if got := d.got(); len(got) != 1 || got[0].Env != "prod" {
		t.Fatalf("deployProd calls: %+v", got)
	}
	reqs := model.Requests()
	results := 0
	for _, msg := range reqs[len(reqs)-1] {
		for _, p := range msg.Parts {
			if _, ok := p.(llms.ToolCallResponse); ok {
				results++
			}
		}
	}
	if results != 3 {
		t.Fatalf("the model got %d tool results for 3 calls", results)
	}
}

// TestSubagentInterrupt: a subagent's call that needs approval parks the
// root run; the interrupt surfaces on the root stream with the task call's
// id in its path, and a resume of the root thread, on a second server
// opened on the same store, lets the subagent go on and the root answer.
func TestSubagentInterrupt(t *testing.T) {
	d := &deploys{}
	dir := writeApp(t, map[string]string{
		"lead/agent.md":                    "You lead.",
		"lead/subagents/deployer/agent.md": "---\napprove: [deployProd]\n---\nYou deploy.",
	})
	db := filepath.Join(t.TempDir(), "dawn.db")
	first := dawntest.Script().
		CallTool("task", map[string]string{"subagent": "deployer", "input": "ship 1.4.2"}).
		CallTool("deployProd", map[string]string{"env": "prod", "version": "1.4.2"})
	url, h := serve(t, dir, first, d, db)
	body, _ := json.Marshal(map[string]any{"route": "/lead", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": "ship it"}}}})
	events := readSSE(t, post(t, url+"/threads/s1/runs/stream", string(body)))
	types := dawntest.Types(events)
	if got := strings.Join(types, ","); !strings.HasSuffix(got, "subagent.tool_call,interrupt,done") || strings.Contains(got, "subagent.interrupt") {
		t.Fatalf("events of the parked run: %s", got)
	}
	var in interrupt
	var raw struct {
		Path []string `json:"path"`
	}
	data := events[len(events)-2].Data
	if json.Unmarshal(data, &in) != nil || json.Unmarshal(data, &raw) != nil || in.Detail.ToolName != "deployProd" || len(raw.Path) != 1 {
		t.Fatalf("interrupt: %s", data)
	}
	if st := state(t, url, "s1"); st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Values["__subagents"] == nil {
		t.Fatalf("state of the parked thread: %s", st.raw)
	}
	h.Runs.Shutdown(context.Background())
	if err := h.Store.Close(); err != nil {
		t.Fatal(err)
	}

	second := dawntest.Script().Reply("deployed 1.4.2").Reply("all done")
	url2, _ := serve(t, dir, second, d, db)
	resumed := fmt.Sprintf(`{"route":"/lead","resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, in.ID)
	events = resume(t, url2, "s1", resumed)
	if answer := finalAnswer(t, events); answer != "all done" {
		t.Fatalf("final answer %q; events %v", answer, dawntest.Types(events))
	}
	if got := d.got(); len(got) != 1 || got[0].Env != "prod" {
		t.Fatalf("deployProd calls: %+v", got)
	}
	if text := toolMessage(t, second); text != "deployed 1.4.2" {
		t.Fatalf("the lead got %q from the subagent", text)
	}
	if st := state(t, url2, "s1"); st.Status != "idle" || st.Values["__subagents"] != nil || st.Values["__interrupts"] != nil {
		t.Fatalf("state after the resume: %s", st.raw)
	}
}

// aguiEvents reads an AG-UI SSE response: the JSON of each data line.
func aguiEvents(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("AG-UI: %d %s", resp.StatusCode, data)
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("AG-UI event %s: %v", data, err)
		}
		out = append(out, e)
	}
	return out
}

// TestAGUIApproval: over AG-UI a parked run finishes with the interrupt
// outcome, and RunAgentInput.resume answers it.
func TestAGUIApproval(t *testing.T) {
	d := &deploys{}
	url, _ := serve(t, opsApp(t, nil), deployScript(), d, "")
	start := `{"threadId":"g1","runId":"r1","messages":[{"id":"m1","role":"user","content":"ship 1.4.2"}],"tools":[],"context":[],"state":{}}`
	events := aguiEvents(t, post(t, url+"/agui/%2Fops%23agent", start))
	last := events[len(events)-1]
	outcome, _ := last["outcome"].(map[string]any)
	interrupts, _ := outcome["interrupts"].([]any)
	if last["type"] != "RUN_FINISHED" || outcome["type"] != "interrupt" || len(interrupts) != 1 {
		t.Fatalf("last AG-UI event of a parked run: %v", last)
	}
	id, _ := interrupts[0].(map[string]any)["id"].(string)
	resumed := fmt.Sprintf(`{"threadId":"g1","runId":"r2","messages":[],"tools":[],"context":[],"state":{},"resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, id)
	events = aguiEvents(t, post(t, url+"/agui/%2Fops%23agent", resumed))
	last = events[len(events)-1]
	if outcome, _ := last["outcome"].(map[string]any); last["type"] != "RUN_FINISHED" || outcome["type"] != "success" {
		t.Fatalf("last AG-UI event of the resumed run: %v", last)
	}
	if n := len(d.got()); n != 1 {
		t.Fatalf("deployProd ran %d times", n)
	}
}
