package langgraph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// kept is a checkpoint as history and getState show it.
type kept struct {
	Values struct {
		Messages []lgMessage     `json:"messages"`
		Todos    []dawntest.Todo `json:"todos"`
	} `json:"values"`
	Next       []string `json:"next"`
	Checkpoint struct {
		ThreadID     string `json:"thread_id"`
		CheckpointNS string `json:"checkpoint_ns"`
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	ParentCheckpoint *struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"parent_checkpoint"`
	Metadata struct {
		Step   int    `json:"step"`
		Source string `json:"source"`
		RunID  string `json:"run_id"`
	} `json:"metadata"`
	CreatedAt string `json:"created_at"`
}

func (k kept) last() string {
	if n := len(k.Values.Messages); n > 0 {
		return k.Values.Messages[n-1].Content
	}
	return ""
}

func (k kept) statuses() []string {
	var out []string
	for _, t := range k.Values.Todos {
		out = append(out, t.Status)
	}
	return out
}

// postOK posts body and decodes a 200 answer into v.
func postOK(t *testing.T, url, body string, v any) {
	t.Helper()
	resp := post(t, url, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: status %d: %s", url, resp.StatusCode, data)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("POST %s: %v in %s", url, err, data)
		}
	}
}

func history(t *testing.T, url, threadID string) []kept {
	t.Helper()
	var h []kept
	postOK(t, url+"/threads/"+threadID+"/history", `{"limit":100}`, &h)
	return h
}

// TestLangGraphForks, on SQLite and Postgres: a thread of three exchanges
// (the plan changes in the second) keeps a checkpoint per step; a run from
// the first exchange's end regenerates the second answer on a new branch
// with the plan as it was then, while the old branch stays in history;
// updateState then a run goes on from the update; threads.copy gives the
// same state and history on a new id.
func TestLangGraphForks(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dawn.db")
			if kind == "postgres" {
				path = pgtest.Database(t)
			}
			testForks(t, path)
		})
	}
}

func testForks(t *testing.T, storePath string) {
	model := dawntest.Script().
		CallTool("writeTodos", fourTodos(1)).Reply("A1").
		CallTool("writeTodos", fourTodos(3)).Reply("A2").
		Reply("A3").
		Reply("A2 regenerated").
		Reply("A4").
		Reply("A4 again").
		Reply("A2 once more")
	h := apptest.New(t, supportApp(t), model, apptest.Options{StorePath: storePath})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"f1"}`, nil)
	if got := history(t, url, "f1"); len(got) != 0 {
		t.Fatalf("history of a new thread: %d checkpoints, want none", len(got))
	}
	for _, q := range []string{"Q1", "Q2", "Q3"} {
		postOK(t, url+"/threads/f1/runs/wait", lgBody("/support/acme", q, nil), nil)
	}
	before := history(t, url, "f1")
	// LangGraph's view, a checkpoint per node: each run has its input
	// (source "input", the state before it) and the input applied; each
	// model turn that called tools, the state after it and after its
	// tools; then the answer. Two such runs (the plan, then the answer),
	// then one that only answers: 5+5+3.
	if len(before) != 13 || before[0].last() != "A3" || before[0].Metadata.Step != 9 || before[2].Metadata.Source != "input" || before[2].last() != "A2" || before[1].last() != "Q3" {
		t.Fatalf("history after three exchanges: %d checkpoints, newest %q at step %d", len(before), before[0].last(), before[0].Metadata.Step)
	}
	for i, k := range before {
		if k.Checkpoint.ThreadID != "f1" || k.Checkpoint.CheckpointID == "" || k.CreatedAt == "" || k.Next == nil {
			t.Errorf("checkpoint %d: %+v", i, k.Checkpoint)
		}
		if i+1 < len(before) && (k.ParentCheckpoint == nil || k.ParentCheckpoint.CheckpointID != before[i+1].Checkpoint.CheckpointID) {
			t.Errorf("checkpoint %d's parent is not the one before it", i)
		}
	}
	firstEnd := before[8] // Dawn's step 2: A1, the plan with one item completed
	if firstEnd.last() != "A1" || !slices.Equal(firstEnd.statuses(), []string{"completed", "in_progress", "pending", "pending"}) {
		t.Fatalf("the first exchange's end: %q, plan %v", firstEnd.last(), firstEnd.statuses())
	}

	after := checkRegenerate(t, url, before, firstEnd)
	checkUpdateThenRun(t, url)
	checkThreadCopy(t, url)
	checkDawnWire(t, url, firstEnd, after)
}

// runOutput is the state values runs/wait answers with.
type runOutput struct {
	Messages []lgMessage     `json:"messages"`
	Todos    []dawntest.Todo `json:"todos"`
}

// checkRegenerate regenerates the second answer of thread f1: a run from
// the first exchange's end, firstEnd. It returns the history after it.
func checkRegenerate(t *testing.T, url string, before []kept, firstEnd kept) []kept {
	t.Helper()
	var out runOutput
	postOK(t, url+"/threads/f1/runs/wait", lgBody("/support/acme", "Q2", map[string]any{"checkpoint": map[string]string{"checkpoint_id": firstEnd.Checkpoint.CheckpointID}}), &out)
	var contents []string
	for _, m := range out.Messages {
		contents = append(contents, m.Content)
	}
	if len(out.Messages) != 6 || contents[3] != "A1" || contents[4] != "Q2" || contents[5] != "A2 regenerated" {
		t.Fatalf("the regenerated branch: %q", contents)
	}
	if out.Todos[1].Status != "in_progress" {
		t.Errorf("the fork's plan %+v: want the plan as the first exchange left it", out.Todos)
	}
	after := history(t, url, "f1")
	if len(after) != 16 || after[2].ParentCheckpoint == nil || after[2].ParentCheckpoint.CheckpointID != firstEnd.Checkpoint.CheckpointID {
		t.Fatalf("history after the fork: %d checkpoints; the new input's parent %+v, want %s", len(after), after[2].ParentCheckpoint, firstEnd.Checkpoint.CheckpointID)
	}
	oldEnd := after[3]
	if oldEnd.Checkpoint.CheckpointID != before[0].Checkpoint.CheckpointID || oldEnd.last() != "A3" || oldEnd.statuses()[3] != "in_progress" {
		t.Errorf("the old branch's end: %q, plan %v", oldEnd.last(), oldEnd.statuses())
	}
	for i := range 4 {
		if after[0].Values.Messages[i].ID != oldEnd.Values.Messages[i].ID {
			t.Errorf("shared message %d has id %s on the new branch and %s on the old", i, after[0].Values.Messages[i].ID, oldEnd.Values.Messages[i].ID)
		}
	}
	if after[0].Values.Messages[4].ID == oldEnd.Values.Messages[4].ID {
		t.Error("the new branch's question has the old branch's id")
	}
	var st kept
	getJSON(t, url+"/threads/f1/state/"+oldEnd.Checkpoint.CheckpointID, &st)
	if st.last() != "A3" || st.Checkpoint.CheckpointID != oldEnd.Checkpoint.CheckpointID {
		t.Errorf("getState at the old branch's end: %q", st.last())
	}
	var head kept
	getJSON(t, url+"/threads/f1/state", &head)
	if head.Checkpoint.CheckpointID != after[0].Checkpoint.CheckpointID {
		t.Errorf("the thread's state is %s, want the new branch's head %s", head.Checkpoint.CheckpointID, after[0].Checkpoint.CheckpointID)
	}

	return after
}

// checkUpdateThenRun: updateState, then a run: the update is a checkpoint
// the run goes on from; then the answer is regenerated as useStream does.
func checkUpdateThenRun(t *testing.T, url string) {
	t.Helper()
	var head kept
	var out runOutput
	var upd struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	postOK(t, url+"/threads/f1/state", `{"values":{"messages":[{"type":"human","content":"note"}],"todos":[{"content":"Follow up","status":"pending"}]},"as_node":"agent"}`, &upd)
	getJSON(t, url+"/threads/f1/state", &head)
	if head.Checkpoint.CheckpointID != upd.Checkpoint.CheckpointID || head.last() != "note" || len(head.Values.Todos) != 1 || head.Metadata.Source != "update" {
		t.Fatalf("after updateState: checkpoint %s (answered %s), last %q, todos %+v, source %q", head.Checkpoint.CheckpointID, upd.Checkpoint.CheckpointID, head.last(), head.Values.Todos, head.Metadata.Source)
	}
	postOK(t, url+"/threads/f1/runs/wait", lgBody("/support/acme", "Q4", nil), &out)
	if n := len(out.Messages); n != 9 || out.Messages[6].Content != "note" || out.Messages[8].Content != "A4" {
		t.Errorf("the run after the update: %+v", out.Messages)
	}

	// Regenerate the answer as useStream does: a run with no input from
	// the parent of the first checkpoint that holds the answer, where Q4
	// was added.
	getJSON(t, url+"/threads/f1/state", &head)
	input := head.ParentCheckpoint.CheckpointID
	postOK(t, url+"/threads/f1/runs/wait", `{"assistant_id":"/support/acme","input":null,"checkpoint":{"checkpoint_id":"`+input+`"}}`, &out)
	if n := len(out.Messages); n != 9 || out.Messages[7].Content != "Q4" || out.Messages[8].Content != "A4 again" {
		t.Errorf("the regenerated answer: %+v", out.Messages)
	}

}

// checkThreadCopy: threads.copy gives the same state and history on a new
// id.
func checkThreadCopy(t *testing.T, url string) {
	t.Helper()
	var cp struct {
		ThreadID string `json:"thread_id"`
	}
	postOK(t, url+"/threads/f1/copy", `{}`, &cp)
	if cp.ThreadID == "" || cp.ThreadID == "f1" {
		t.Fatalf("copy: thread %q", cp.ThreadID)
	}
	var a, b json.RawMessage
	getJSON(t, url+"/threads/f1/state", &struct {
		Values *json.RawMessage `json:"values"`
	}{&a})
	getJSON(t, url+"/threads/"+cp.ThreadID+"/state", &struct {
		Values *json.RawMessage `json:"values"`
	}{&b})
	if !bytes.Equal(a, b) {
		t.Errorf("the copy's values\n%s\ndiffer from the original's\n%s", b, a)
	}
	if ha, hb := history(t, url, "f1"), history(t, url, cp.ThreadID); len(ha) != len(hb) || hb[0].Checkpoint.ThreadID != cp.ThreadID {
		t.Errorf("the copy has %d checkpoints, the original %d", len(hb), len(ha))
	}

}

// checkDawnWire: on Dawn's wire, a run from a checkpoint, or from one the
// thread does not have, and the history a page at a time.
func checkDawnWire(t *testing.T, url string, firstEnd kept, after []kept) {
	t.Helper()
	var dawnOut struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	postOK(t, url+"/threads/f1/runs/wait", `{"route":"/support/acme","checkpoint_id":"`+firstEnd.Checkpoint.CheckpointID+`","input":{"messages":[{"role":"user","content":"Q2 once more"}]}}`, &dawnOut)
	if n := len(dawnOut.Messages); n != 6 || dawnOut.Messages[4].Content != "Q2 once more" {
		t.Errorf("a run from a checkpoint on Dawn's wire: %+v", dawnOut.Messages)
	}
	if kind := errorKind(t, post(t, url+"/threads/f1/runs/wait", `{"route":"/support/acme","checkpoint_id":"nope","input":{"messages":[{"role":"user","content":"x"}]}}`), http.StatusNotFound); !bytes.HasPrefix([]byte(kind), []byte("checkpoint_not_found")) {
		t.Errorf("a run from an unknown checkpoint on Dawn's wire: %s", kind)
	}

	// Dawn's wire: GET /threads/:id/history, newest first, a page at a
	// time, one checkpoint per step (LangGraph's view has the ones
	// between: after[2] is the state before the fork's input).
	var page []kept
	getJSON(t, url+"/threads/f1/history?limit=2&before="+after[0].Checkpoint.CheckpointID, &page)
	if len(page) != 2 || page[0].Checkpoint.CheckpointID != after[1].Checkpoint.CheckpointID || page[1].Checkpoint.CheckpointID != after[3].Checkpoint.CheckpointID {
		t.Errorf("GET history before the fork's end: %d checkpoints", len(page))
	}
}

// TestLangGraphSuperstepsAndCommandUpdate: threads.create's supersteps
// become the thread's first checkpoints, through the route's reducers; a
// run's command.update is a checkpoint before the run, whose user
// messages are the run's input.
func TestLangGraphSuperstepsAndCommandUpdate(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hello again.").Repeat(), apptest.Options{})
	url := h.Serve(t)
	postOK(t, url+"/threads", `{"thread_id":"s1","graph_id":"/support/acme","supersteps":[
		{"updates":[{"values":{"messages":[{"type":"human","content":"hi"}]},"as_node":"__input__"}]},
		{"updates":[{"values":{"messages":[{"type":"ai","content":"hello"}],"todos":[{"content":"Greet","status":"completed"}]},"as_node":"agent"}]}]}`, nil)
	hist := history(t, url, "s1")
	// As in LangGraph, the update made as the graph's input waits for
	// __start__: its checkpoint shows the state before it; it is the
	// input, and an update made as a node an update.
	if len(hist) != 2 || hist[0].Metadata.Source != "update" || hist[1].Metadata.Source != "input" || hist[0].last() != "hello" || len(hist[0].Values.Todos) != 1 ||
		len(hist[1].Values.Messages) != 0 || len(hist[1].Next) != 1 || hist[1].Next[0] != "__start__" {
		t.Fatalf("a thread created with supersteps: %+v", hist)
	}
	if kind := errorKind(t, post(t, url+"/threads", `{"thread_id":"s2","supersteps":[{"updates":[{"values":{"x":1},"as_node":"judge"}]}]}`), http.StatusBadRequest); !bytes.Contains([]byte(kind), []byte("judge")) {
		t.Errorf("a superstep as an unknown node: %s", kind)
	}
	if kind := errorKind(t, post(t, url+"/threads", `{"thread_id":"s3","graph_id":"/support/acme","supersteps":[{"updates":[{"values":{"mood":"calm"}}]}]}`), http.StatusBadRequest); !bytes.Contains([]byte(kind), []byte("mood")) {
		t.Errorf("a superstep with a field the route lacks: %s", kind)
	}
	for _, id := range []string{"s2", "s3"} {
		if status := getJSON(t, url+"/threads/"+id, nil); status != http.StatusNotFound {
			t.Errorf("thread %s is left after its supersteps failed: status %d", id, status)
		}
	}

	var out struct {
		Messages []lgMessage     `json:"messages"`
		Todos    []dawntest.Todo `json:"todos"`
	}
	postOK(t, url+"/threads/s1/runs/wait", `{"assistant_id":"/support/acme","input":null,"command":{"update":{"messages":[{"type":"human","content":"from the command"}],"todos":[{"content":"Answer","status":"in_progress"}]}}}`, &out)
	n := len(out.Messages)
	if n != 4 || out.Messages[2].Content != "from the command" || out.Messages[3].Content != "Hello again." || len(out.Todos) != 1 || out.Todos[0].Content != "Answer" {
		t.Fatalf("a run with command.update: %+v, todos %+v", out.Messages, out.Todos)
	}
	hist = history(t, url, "s1")
	// LangGraph's view: the answer, the input applied, before it, the
	// update, the supersteps.
	if len(hist) != 6 || hist[3].Metadata.Source != "update" || hist[2].Metadata.Source != "input" || hist[1].Metadata.Source != "loop" || hist[0].Metadata.Source != "loop" {
		t.Errorf("history after command.update: %d checkpoints", len(hist))
	}
	// Without messages nor input, the update is kept and the model goes
	// on from the updated state.
	postOK(t, url+"/threads/s1/runs/wait", `{"assistant_id":"/support/acme","input":null,"command":{"update":{"todos":[]}}}`, &out)
	if n := len(out.Messages); n != 5 || out.Messages[4].Content != "Hello again." || len(out.Todos) != 0 {
		t.Errorf("command.update without messages nor input: %+v, todos %+v", out.Messages, out.Todos)
	}
	if again := history(t, url, "s1"); len(again) != len(hist)+2 || again[1].Metadata.Source != "update" {
		t.Errorf("history after command.update without input: %d checkpoints, want %d", len(again), len(hist)+2)
	}
}
