package planning_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/tmc/langchaingo/llms"
)

// planApp is a route whose harness-owned plan waits for a person.
func planApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"ship/agent.md": "You ship releases.",
		"ship/plan.md":  "---\nenforce: true\napproval: required\n---\n- [ ] Ship the release\n",
	}
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

func servePlan(t *testing.T, model llms.Model) string {
	t.Helper()
	h := apptest.New(t, planApp(t), model, apptest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	return srv.URL
}

var postJSON = apptest.PostJSON

// sse reads an SSE response to its end.
var sse = apptest.ReadSSE

type planInterrupt struct {
	ID     string `json:"interruptId"`
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	Detail struct {
		Todos []struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"todos"`
	} `json:"detail"`
}

type savedPlan struct {
	State    string `json:"state"`
	Approved bool   `json:"approved"`
	Reason   string `json:"reason"`
	Items    []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"items"`
}

type shipState struct {
	Status string `json:"status"`
	Values struct {
		Plan       *savedPlan      `json:"plan"`
		Interrupts json.RawMessage `json:"__interrupts"`
	} `json:"values"`
	raw string
}

func shipStateOf(t *testing.T, url string) shipState {
	t.Helper()
	resp, err := http.Get(url + "/threads/t1/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st shipState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("state: %v in %s", err, data)
	}
	st.raw = string(data)
	return st
}

func (p *savedPlan) contents() string {
	var c []string
	for _, it := range p.Items {
		c = append(c, it.Content+"="+it.Status)
	}
	return strings.Join(c, ",")
}

var proposedPlan = map[string]any{"todos": []map[string]string{
	{"content": "Build the release", "status": "in_progress"},
	{"content": "Deploy it", "status": "pending"},
}}

// parkPlan starts a run whose model proposes proposedPlan and returns the
// plan interrupt, after checking the plan did not change.
func parkPlan(t *testing.T, url string) planInterrupt {
	t.Helper()
	body := `{"route":"/ship","input":{"messages":[{"role":"user","content":"ship 1.4.2"}]}}`
	events := sse(t, postJSON(t, url+"/threads/t1/runs/stream", body))
	types := strings.Join(dawntest.Types(events), ",")
	if !strings.HasSuffix(types, "tool_call,interrupt,done") {
		t.Fatalf("events of a parked run: %s", types)
	}
	var in planInterrupt
	if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
		t.Fatal(err)
	}
	if in.Type != "permission-request" || in.Kind != "plan" || !strings.HasPrefix(in.ID, "plan-") || len(in.Detail.Todos) != 2 || in.Detail.Todos[1].Content != "Deploy it" {
		t.Fatalf("plan interrupt: %s", events[len(events)-2].Data)
	}
	st := shipStateOf(t, url)
	if st.Status != "interrupted" || st.Values.Plan == nil || st.Values.Plan.contents() != "Ship the release=in_progress" || st.Values.Plan.Approved {
		t.Fatalf("the held plan changed before anyone approved it: %s", st.raw)
	}
	return in
}

func resumePlan(id, payload string) string {
	return fmt.Sprintf(`{"route":"/ship","resume":[{"interruptId":%q,"status":"resolved","payload":%s}]}`, id, payload)
}

// TestPlanApproved: the model's first plan parks the run; "approve" runs
// exactly that plan, and a later writeTodos on the approved plan is not
// asked again.
func TestPlanApproved(t *testing.T) {
	done := map[string]any{"todos": []map[string]string{
		{"content": "Build the release", "status": "completed"},
		{"content": "Deploy it", "status": "completed"},
	}}
	model := dawntest.Script().CallTool("writeTodos", proposedPlan).CallTool("writeTodos", done).Reply("shipped")
	url := servePlan(t, model)
	in := parkPlan(t, url)
	events := sse(t, postJSON(t, url+"/threads/t1/resume", resumePlan(in.ID, `"approve"`)))
	types := strings.Join(dawntest.Types(events), ",")
	if strings.Contains(types, "interrupt") || !strings.HasSuffix(types, ",done") {
		t.Fatalf("events after approve (the second writeTodos must not ask again): %s", types)
	}
	st := shipStateOf(t, url)
	if p := st.Values.Plan; st.Status != "idle" || p == nil || !p.Approved || p.State != "done" || p.contents() != "Build the release=completed,Deploy it=completed" {
		t.Fatalf("state after approve: %s", st.raw)
	}
}

// TestPlanEdited: an edit replaces the proposed plan, which runs instead.
func TestPlanEdited(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", proposedPlan).Reply("on it")
	url := servePlan(t, model)
	in := parkPlan(t, url)
	edit := `{"decision":"edit","todos":[{"content":"Run the tests","status":"in_progress"},{"content":"Build the release","status":"pending"},{"content":"Deploy it","status":"pending"}]}`
	sse(t, postJSON(t, url+"/threads/t1/resume", resumePlan(in.ID, edit)))
	st := shipStateOf(t, url)
	if p := st.Values.Plan; p == nil || !p.Approved || p.contents() != "Run the tests=in_progress,Build the release=pending,Deploy it=pending" {
		t.Fatalf("state after the edit: %s", st.raw)
	}
}

// TestPlanRejected: "reject" cancels the plan; the model is told and
// answers the user.
func TestPlanRejected(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", proposedPlan).Reply("The plan was rejected.")
	url := servePlan(t, model)
	in := parkPlan(t, url)
	events := sse(t, postJSON(t, url+"/threads/t1/resume", resumePlan(in.ID, `"reject"`)))
	if types := strings.Join(dawntest.Types(events), ","); !strings.Contains(types, "plan_cancelled") || !strings.HasSuffix(types, ",done") {
		t.Fatalf("events after reject: %s", types)
	}
	st := shipStateOf(t, url)
	if p := st.Values.Plan; st.Status != "idle" || p == nil || p.State != "cancelled" || p.contents() != "Ship the release=in_progress" {
		t.Fatalf("state after reject: %s", st.raw)
	}
	reqs := model.Requests()
	told := false
	for _, msg := range reqs[len(reqs)-1] {
		for _, part := range msg.Parts {
			if r, ok := part.(llms.ToolCallResponse); ok && strings.Contains(r.Content, "a person rejected this plan") {
				told = true
			}
		}
	}
	if !told {
		t.Fatal("the model was not told the plan was rejected")
	}
}

// TestPlanBadEditChangesNothing: an edit writeTodos would refuse is a 400
// naming the fault, and the thread stays parked with the plan unchanged;
// a good answer then still works.
func TestPlanBadEditChangesNothing(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", proposedPlan).Reply("on it")
	url := servePlan(t, model)
	in := parkPlan(t, url)
	before := shipStateOf(t, url).raw
	for _, tc := range []struct{ payload, want string }{
		{`{"decision":"edit","todos":[{"content":"Deploy it","status":"done"}]}`, "todos[0].status"},
		{`{"decision":"edit"}`, "no todos"},
		{`{"decision":"edit","todos":[{"content":"x","status":"pending"}],"extra":1}`, "a plan answer must be"},
		{`"maybe"`, "unknown plan decision"},
	} {
		resp := postJSON(t, url+"/threads/t1/resume", resumePlan(in.ID, tc.payload))
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), tc.want) {
			t.Errorf("payload %s: status %d, body %s; want 400 naming %q", tc.payload, resp.StatusCode, data, tc.want)
		}
		if after := shipStateOf(t, url).raw; after != before {
			t.Fatalf("payload %s changed the thread:\nbefore %s\nafter  %s", tc.payload, before, after)
		}
	}
	sse(t, postJSON(t, url+"/threads/t1/resume", resumePlan(in.ID, `"approve"`)))
	if p := shipStateOf(t, url).Values.Plan; p == nil || !p.Approved || p.contents() != "Build the release=in_progress,Deploy it=pending" {
		t.Fatalf("approve after the bad edits: %s", shipStateOf(t, url).raw)
	}
}

// TestPlanEditIsAPersonsRevision: the revision a person's edit makes is
// on the record as theirs, with the reason they gave; an approved plan's
// revision stays the model's.
func TestPlanEditIsAPersonsRevision(t *testing.T) {
	model := dawntest.Script().CallTool("writeTodos", proposedPlan).Reply("on it")
	url := servePlan(t, model)
	in := parkPlan(t, url)
	edit := `{"decision":"edit","reason":"test before building","todos":[{"content":"Run the tests","status":"in_progress"},{"content":"Build the release","status":"pending"},{"content":"Deploy it","status":"pending"}]}`
	sse(t, postJSON(t, url+"/threads/t1/resume", resumePlan(in.ID, edit)))
	var page struct {
		Revisions []struct {
			Source string          `json:"source"`
			Reason string          `json:"reason"`
			Diff   json.RawMessage `json:"diff"`
		} `json:"revisions"`
	}
	resp, err := http.Get(url + "/threads/t1/plan/revisions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	var edited []string
	for _, r := range page.Revisions {
		if strings.Contains(string(r.Diff), "Run the tests") {
			edited = append(edited, r.Source+": "+r.Reason)
		}
	}
	if len(edited) != 1 || edited[0] != "person: test before building" {
		t.Fatalf("the edit's revisions = %q (all: %+v); want one by the person, with their reason", edited, page.Revisions)
	}
}
