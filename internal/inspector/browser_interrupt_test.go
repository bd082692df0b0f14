package inspector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/inspector"
)

// The decisions a parked run waits on are drawn in the #decisions card,
// one li.interrupt per pending interrupt, with a button per decision
// (data-decision) and, for the decisions that take text, a form.
const (
	decision     = `#interrupts > li.interrupt`
	sendDisabled = `(document.body.dataset.running === 'true')`
)

// writeApp writes files (name → text) into dir.
func writeApp(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// threadState is GET /threads/:id/state as these tests read it.
type threadState struct {
	Status     string `json:"status"`
	Interrupts []struct {
		ID   string `json:"interruptId"`
		Kind string `json:"kind"`
	} `json:"interrupts"`
	Values struct {
		Todos []struct {
			Content, Status string
		} `json:"todos"`
		Plan *serverPlan `json:"plan"`
	} `json:"values"`
}

func getState(t *testing.T, base, thread string) threadState {
	t.Helper()
	resp, err := http.Get(base + "/threads/" + thread + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var s threadState
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &s) != nil {
		t.Fatalf("GET /threads/%s/state: %d %s", thread, resp.StatusCode, data)
	}
	return s
}

// editorJSON is the JSON in the open editor of the decision, re-encoded so
// spacing does not matter.
func (p *page) editorJSON() string {
	p.t.Helper()
	return p.text(`JSON.stringify(JSON.parse(document.querySelector('` + decision + ` form:not([hidden]) textarea').value))`)
}

// submitEditor puts text into the open editor of the decision and sends it.
func (p *page) submitEditor(text string) {
	p.t.Helper()
	p.run(chromedp.SetValue(chromedp.CSS(decision+` form:not([hidden]) textarea`), text),
		chromedp.Click(chromedp.CSS(decision+` form:not([hidden]) button[type=submit]`)))
}

// testToolApproval: a route whose writeTodos needs approval parks. The page
// shows the call with its arguments and the tool decisions; an edit the
// tool's schema refuses is a 400 shown next to the editor, with the thread
// still parked; after a reload the decision is drawn again from the
// thread's state, and Approve once runs the call as the model made it.
func testToolApproval(t *testing.T, browserCtx context.Context) {
	dir := exampleApp(t)
	writeApp(t, dir, map[string]string{
		"gated/agent.md": "---\napprove: [writeTodos]\n---\nYou plan.",
		"gated/plan.md":  "- [ ] The one thing\n",
	})
	todos := map[string]any{"todos": []map[string]string{{"content": "The one thing", "status": "completed"}}}
	model := dawntest.Script().CallTool("writeTodos", todos).Reply("Planned and done.")
	base := startServerWith(t, dir, model).URL
	p := openPage(t, browserCtx, base)
	p.pickRoute("/gated")
	p.send("Plan it")
	p.waitFor("the decision to show", `document.querySelector('`+decision+`[data-kind="tool"] button[data-decision="once"]') && !`+sendDisabled)
	if got := p.text(`document.querySelector('` + decision + `').textContent`); !strings.Contains(got, "writeTodos") || !strings.Contains(got, "The one thing") {
		t.Errorf("the decision shows %q, want the tool and its arguments", got)
	}
	var labels []string
	p.eval(`[...document.querySelectorAll('`+decision+` button[data-decision]')].map(b => b.dataset.decision)`, &labels)
	if !slices.Equal(labels, []string{"once", "always", "deny", "edit"}) {
		t.Errorf("tool decisions = %q, want once, always, deny, edit", labels)
	}

	p.run(chromedp.Click(chromedp.CSS(decision + ` button[data-decision="edit"]`)))
	want, _ := json.Marshal(todos)
	if got := p.editorJSON(); got != string(want) {
		t.Errorf("the arguments editor holds %s, want the call's arguments %s", got, want)
	}
	p.submitEditor(`{"todos": "not a list"}`)
	p.waitFor("the 400 next to the editor", `document.querySelector('`+decision+` .err').textContent.includes('schema')`)
	thread := p.thread()
	if s := getState(t, base, thread); s.Status != "interrupted" || len(s.Interrupts) != 1 || s.Interrupts[0].Kind != "tool" {
		t.Fatalf("after a refused edit the thread is %q with interrupts %+v, want still parked on the tool call", s.Status, s.Interrupts)
	}
	var state struct {
		Editor, Messages int
		Enabled          bool
	}
	p.eval(`({editor: document.querySelectorAll('`+decision+` form:not([hidden]) textarea').length,
		messages: document.querySelectorAll('#chat .msg.error').length,
		enabled: !document.querySelector('`+decision+` button[data-decision="once"]').matches(':disabled')})`, &state)
	if state.Editor != 1 || state.Messages != 0 || !state.Enabled {
		t.Errorf("after the 400: %+v, want the editor still open, no error message in the conversation, the decisions enabled again", state)
	}

	// A reload draws the pending decision from GET /threads/:id/state.
	p.run(chromedp.Reload())
	p.waitFor("the decision after a reload", `document.body.dataset.ready === 'true' && document.querySelector('`+decision+`[data-kind="tool"] button[data-decision="once"]')`)
	p.waitFor("the held call to wait in the timeline", `[...document.querySelectorAll('#chat details.call .meta')].some(e => e.textContent === 'waiting for your decision')`)
	p.run(chromedp.Click(chromedp.CSS(decision + ` button[data-decision="edit"]`)))
	if got := p.editorJSON(); got != string(want) {
		t.Errorf("after a reload the arguments editor holds %s, want %s", got, want)
	}
	p.run(chromedp.Click(chromedp.CSS(decision + ` button[data-decision="once"]`)))
	p.waitFor("the answer after the approval", `[...document.querySelectorAll('#chat .msg.assistant')].some(e => e.textContent === 'Planned and done.') && !`+sendDisabled)
	if n := p.text(`String(document.querySelectorAll('` + decision + `').length)`); n != "0" {
		t.Errorf("%s decisions still shown after the resume", n)
	}
	if got := p.text(`[...document.querySelectorAll('#chat details.call.ok .name')].map(e => e.textContent).join()`); got != "writeTodos" {
		t.Errorf("finished calls in the timeline = %q, want the approved writeTodos", got)
	}
	s := getState(t, base, thread)
	if s.Status != "idle" || len(s.Values.Todos) != 1 || s.Values.Todos[0].Status != "completed" {
		t.Errorf("state after the approval: %+v, want idle with the call's todos", s)
	}
}

// testPlanApproval: a harness plan with approval: required parks on the
// model's first plan. The page shows the proposed items; Approve runs that
// plan, or Edit sends a replacement (a bad one is a 400 next to the
// editor), and the plan card follows the plan as it runs.
func testPlanApproval(t *testing.T, browserCtx context.Context, edit bool) {
	dir := exampleApp(t)
	writeApp(t, dir, map[string]string{
		"ship/agent.md": "You ship releases.",
		"ship/plan.md":  "---\nenforce: true\napproval: required\n---\n- [ ] Ship the release\n",
	})
	proposed := map[string]any{"todos": []map[string]string{
		{"content": "Build the release", "status": "in_progress"},
		{"content": "Deploy it", "status": "pending"},
	}}
	last := "Deploy it"
	if edit {
		last = "Deploy it to staging"
	}
	done := map[string]any{"todos": []map[string]string{
		{"content": "Build the release", "status": "completed"},
		{"content": last, "status": "completed"},
	}}
	model := dawntest.Script().CallTool("writeTodos", proposed).CallTool("writeTodos", done).Reply("Shipped.")
	base := startServerWith(t, dir, model).URL
	p := openPage(t, browserCtx, base)
	p.pickRoute("/ship")
	p.send("Ship 1.4.2")
	p.waitFor("the proposed plan", `document.querySelector('`+decision+`[data-kind="plan"] button[data-decision="approve"]') && !`+sendDisabled)
	var items, labels []string
	p.eval(`[...document.querySelectorAll('`+decision+` .items > li')].map(e => e.textContent.trim())`, &items)
	if !slices.Equal(items, []string{"▶ Build the release", "○ Deploy it"}) {
		t.Errorf("the decision shows items %q, want the proposed plan", items)
	}
	p.eval(`[...document.querySelectorAll('`+decision+` button[data-decision]')].map(b => b.dataset.decision)`, &labels)
	if !slices.Equal(labels, []string{"approve", "edit", "reject"}) {
		t.Errorf("plan decisions = %q, want approve, edit, reject", labels)
	}
	if g := p.glyphs(); g != "▶" {
		t.Errorf("plan card while the plan waits = %q, want the seed untouched (▶)", g)
	}
	if !edit {
		p.run(chromedp.Click(chromedp.CSS(decision + ` button[data-decision="approve"]`)))
	} else {
		p.run(chromedp.Click(chromedp.CSS(decision + ` button[data-decision="edit"]`)))
		want, _ := json.Marshal(proposed)
		if got := p.editorJSON(); got != string(want) {
			t.Errorf("the plan editor holds %s, want the proposed plan %s", got, want)
		}
		p.submitEditor(`{"todos":[{"content":"Build the release","status":"done"}]}`)
		p.waitFor("the 400 next to the editor", `document.querySelector('`+decision+` .err').textContent.includes('todos[0].status')`)
		if s := getState(t, base, p.thread()); s.Status != "interrupted" || len(s.Interrupts) != 1 {
			t.Fatalf("after a refused edit the thread is %q with %d interrupts, want still parked", s.Status, len(s.Interrupts))
		}
		p.submitEditor(`{"todos":[{"content":"Build the release","status":"in_progress"},{"content":"Deploy it to staging","status":"pending"}]}`)
	}
	p.waitFor("the plan to run", `[...document.querySelectorAll('#chat .msg.assistant')].some(e => e.textContent === 'Shipped.') && !`+sendDisabled)
	var contents []string
	p.eval(`[...document.querySelectorAll('#plan-items .text')].map(e => e.textContent)`, &contents)
	if g := p.glyphs(); g != "✓✓" || !slices.Equal(contents, []string{"Build the release", last}) {
		t.Errorf("plan card after the run: %q %q, want both items of the approved plan done", g, contents)
	}
	sp := getPlan(t, base, p.thread())
	if sp.State != "done" || len(sp.Items) != 2 || sp.Items[1].Content != last {
		t.Errorf("server plan after the run: %+v", sp)
	}
	if n := model.Calls(); n != 3 {
		t.Errorf("the model was called %d times, want 3 (the refused edit asks it nothing)", n)
	}
}

// fakeAPI serves the inspector and just enough of the HTTP API to park a
// run on interrupts of kinds the page only knows by their payloads (a
// plan-first DAG, a manual step, one of no known kind) and records each
// resume body. Each resume answers with the next parked stream.
type fakeAPI struct {
	mu      sync.Mutex
	resumes []string
	streams []string // SSE bodies: the run's, then one per resume
	// revisions, when set, is the body of GET /threads/:id/plan/revisions.
	revisions string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/":
		http.Redirect(w, r, inspector.Prefix, http.StatusFound)
	case strings.HasPrefix(r.URL.Path, inspector.Prefix):
		inspector.Handler().ServeHTTP(w, r)
	case f.revisions != "" && strings.HasSuffix(r.URL.Path, "/plan/revisions"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, f.revisions)
	case r.URL.Path == "/routes":
		fmt.Fprint(w, `[{"id":"/steps","kind":"agent"}]`)
	case r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/runs/stream") || strings.HasSuffix(r.URL.Path, "/resume")):
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		if strings.HasSuffix(r.URL.Path, "/resume") {
			f.resumes = append(f.resumes, string(body))
		}
		next := "event: done\ndata: {\"output\":{}}\n\n"
		if len(f.streams) > 0 {
			next, f.streams = f.streams[0], f.streams[1:]
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, next)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"kind":"plan_not_found","message":"none"}}`)
	}
}

// parked is the SSE of a run that parks on the given interrupts.
func parked(interrupts ...string) string {
	var b strings.Builder
	for _, in := range interrupts {
		fmt.Fprintf(&b, "event: interrupt\ndata: %s\n\n", in)
	}
	fmt.Fprintf(&b, "event: done\ndata: {\"output\":{\"interrupted\":true,\"interrupts\":[%s]}}\n\n", strings.Join(interrupts, ","))
	return b.String()
}

// testOtherKinds: a plan-first DAG shows its steps and dependencies; a
// manual step offers Continue / Skip / Revise (with a note) / Cancel; a kind
// the page does not know shows its detail and a free-form payload box. Two
// interrupts pending at once are answered in one resume.
func testOtherKinds(t *testing.T, browserCtx context.Context) {
	step := func(n int) string {
		// The detail's shape is the harness's (harness/step.go).
		return fmt.Sprintf(`{"interruptId":"step-%d","type":"permission-request","kind":"step","detail":{"plan":{"revision":4,"state":"paused","done":%d,"total":5},"finished":{"position":%d,"id":"s000%d","content":"Step %d","status":"completed","attempts":0},"next":{"position":%d,"id":"s000%d","content":"Step %d","status":"pending","attempts":0},"decisions":["continue","skip","revise","cancel"]},"callId":"call_%d","after":true}`, n, n, n, n, n, n+1, n+1, n+1, n)
	}
	f := &fakeAPI{streams: []string{
		parked(`{"interruptId":"plan-1","type":"permission-request","kind":"plan","detail":{"plan":{"goal":"Research","steps":[{"id":"a","task":"Find sources"},{"id":"b","task":"Summarize","deps":["a"]}]},"order":["a","b"]},"callId":""}`),
		parked(step(1), `{"interruptId":"x-1","type":"permission-request","kind":"budget","detail":{"spent":12}}`),
		parked(step(2)),
		parked(strings.Replace(step(3), `"skip","revise","cancel"`, `"skip","cancel"`, 1)), // a plan-first step: no revise
		parked(step(4)),
		"event: chunk\ndata: \"Stopped.\"\n\nevent: done\ndata: {\"output\":{}}\n\n",
	}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p := openPage(t, browserCtx, srv.URL)
	p.send("Go")

	p.waitFor("the DAG plan", `document.querySelector('`+decision+`[data-kind="plan"]') && !`+sendDisabled)
	var steps []string
	p.eval(`[...document.querySelectorAll('`+decision+` .items > li')].map(e => e.textContent.trim())`, &steps)
	if !slices.Equal(steps, []string{"a Find sources", "b Summarize (after a)"}) {
		t.Errorf("DAG steps shown = %q", steps)
	}
	if got := p.text(`document.querySelector('` + decision + `').textContent`); !strings.Contains(got, "Research") {
		t.Errorf("the DAG decision %q does not show its goal", got)
	}
	p.run(chromedp.Click(chromedp.CSS(decision + ` button[data-decision="approve"]`)))

	p.waitFor("a step and an unknown kind", `document.querySelectorAll('`+decision+`').length === 2 && !`+sendDisabled)
	var labels []string
	p.eval(`[...document.querySelectorAll('`+decision+`[data-kind="step"] button[data-decision]')].map(b => b.dataset.decision)`, &labels)
	if !slices.Equal(labels, []string{"continue", "skip", "revise", "cancel"}) {
		t.Errorf("step decisions = %q", labels)
	}
	if got := p.text(`document.querySelector('` + decision + `[data-kind="step"]').textContent`); !strings.Contains(got, "Step 1") || !strings.Contains(got, "Next: Step 2") {
		t.Errorf("the step decision %q does not name the step", got)
	}
	if got := p.text(`document.querySelector('` + decision + `[data-kind="budget"] pre').textContent`); !strings.Contains(got, `"spent": 12`) {
		t.Errorf("the unknown kind shows %q, want its detail JSON", got)
	}
	p.run(chromedp.Click(chromedp.CSS(decision+`[data-kind="step"] button[data-decision="revise"]`)),
		chromedp.SetValue(chromedp.CSS(decision+`[data-kind="step"] form:not([hidden]) textarea`), "Use two sources"),
		chromedp.Click(chromedp.CSS(decision+`[data-kind="step"] form:not([hidden]) button[type=submit]`)))
	// The answer waits for the other interrupt: one resume answers both
	// (wantResumes below would show a resume of step-1 alone).
	p.run(chromedp.SetValue(chromedp.CSS(decision+`[data-kind="budget"] form textarea`), `{"raise": 5}`),
		chromedp.Click(chromedp.CSS(decision+`[data-kind="budget"] form button[type=submit]`)))
	for _, d := range []string{"continue", "skip", "cancel"} {
		p.waitFor("the next step", `document.querySelectorAll('`+decision+`').length === 1 && document.querySelector('`+decision+` button[data-decision="`+d+`"]:not(:disabled)') && !`+sendDisabled)
		if d == "skip" {
			p.eval(`[...document.querySelectorAll('`+decision+` button[data-decision]')].map(b => b.dataset.decision)`, &labels)
			if !slices.Equal(labels, []string{"continue", "skip", "cancel"}) {
				t.Errorf("decisions of a step that lists no revise = %q", labels)
			}
		}
		p.run(chromedp.Click(chromedp.CSS(decision + ` button[data-decision="` + d + `"]`)))
	}
	p.waitFor("the run to end", `[...document.querySelectorAll('#chat .msg.assistant')].some(e => e.textContent === 'Stopped.') && !`+sendDisabled)

	f.mu.Lock()
	got := f.resumes
	f.mu.Unlock()
	wantResumes := []string{
		`{"route":"/steps","resume":[{"interruptId":"plan-1","status":"resolved","payload":"approve"}]}`,
		`{"route":"/steps","resume":[{"interruptId":"step-1","status":"resolved","payload":{"decision":"revise","note":"Use two sources"}},{"interruptId":"x-1","status":"resolved","payload":{"raise":5}}]}`,
		`{"route":"/steps","resume":[{"interruptId":"step-2","status":"resolved","payload":"continue"}]}`,
		`{"route":"/steps","resume":[{"interruptId":"step-3","status":"resolved","payload":"skip"}]}`,
		`{"route":"/steps","resume":[{"interruptId":"step-4","status":"resolved","payload":"cancel"}]}`,
	}
	if !slices.Equal(got, wantResumes) {
		t.Errorf("resume bodies:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantResumes, "\n"))
	}
}
