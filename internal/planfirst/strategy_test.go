package planfirst

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"gopkg.in/yaml.v3"
)

// fakeRunHost records what a strategy asks of the runtime.
type fakeRunHost struct {
	answers []string // Complete's answers, in turn
	asked   [][]thread.Message
	steps   []string // "callID target: task"
	events  []stream.Event
	saves   []thread.State
	added   []thread.Message
	signal  string
	failOn  string // a task RunStep fails

	mu        sync.Mutex      // RunStep may run concurrently with everything
	stepGate  func(id string) // when set, RunStep calls it before answering
	now, peak int             // steps running at once
}

func (h *fakeRunHost) Complete(_ context.Context, convo []thread.Message) (string, error) {
	h.asked = append(h.asked, convo)
	if len(h.answers) == 0 {
		return "", errors.New("no more answers")
	}
	a := h.answers[0]
	h.answers = h.answers[1:]
	return a, nil
}

func (h *fakeRunHost) Routes() []string { return []string{"/other"} }

func (h *fakeRunHost) RunStep(_ context.Context, callID string, target capabilities.StepTarget, task string) (string, error) {
	h.mu.Lock()
	h.steps = append(h.steps, callID+" "+target.Subagent+target.Route+": "+task)
	h.now++
	h.peak = max(h.peak, h.now)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.now--
		h.mu.Unlock()
	}()
	if h.stepGate != nil {
		h.stepGate(callID)
	}
	if h.failOn != "" && strings.Contains(task, h.failOn) {
		return "", errors.New("step broke")
	}
	return "result of " + callID + "\nmore", nil
}

func (h *fakeRunHost) Emit(e stream.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *fakeRunHost) Save(_ context.Context, added []thread.Message, values thread.State) error {
	h.added = append(h.added, added...)
	h.saves = append(h.saves, values)
	return nil
}

func (h *fakeRunHost) Signal() string { return h.signal }

func (h *fakeRunHost) eventTypes() string {
	var types []string
	for _, e := range h.events {
		types = append(types, e.Type)
	}
	return strings.Join(types, ",")
}

// prepare prepares a route with plan.md (front matter front) and, when
// subagent is set, one subagent.
func prepare(t *testing.T, front, subagent string) *capabilities.Prepared {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, planning.MarkerFile), []byte(front+"- [ ] Seed item\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &router.Route{ID: "/r", Dir: dir, Kind: router.KindAgent}
	if subagent != "" {
		r.Subagents = map[string]string{subagent: "/r/subagents/" + subagent}
	}
	p, err := capabilities.Prepare(context.Background(), r, capabilities.Input{Markers: []capabilities.Marker{planning.Marker()}, AppToolsKnown: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func user(text string) []thread.Message {
	return []thread.Message{{Role: thread.RoleUser, Content: text}}
}

func configured(t *testing.T, src string) marker {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	m, err := Marker().(capabilities.ConfigSection).Configure(map[string]*yaml.Node{ConfigKey: doc.Content[0]})
	if err != nil {
		t.Fatal(err)
	}
	return m.(marker)
}

func TestChoose(t *testing.T) {
	const enforce = "---\nenforce: true\n---\n"
	complex := "Fix the bug in server/runs.go, then add a test and finally deploy it"
	tests := []struct {
		name    string
		m       marker
		front   string
		option  string
		task    string
		want    bool
		wantErr string
	}{
		{"plain route, no option", marker{}, "", "", complex, false, ""},
		{"plain route, option", marker{}, "", "always", "x", false, "plan_first: route /r has no harness-owned plan; add enforce: true to the front matter of its plan.md to plan first"},
		{"harness route, default off", marker{}, enforce, "", complex, false, ""},
		{"option always", marker{}, enforce, "Always", "hi", true, ""},
		{"option preview", marker{}, enforce, "preview", "hi", true, ""},
		{"bad option", marker{}, enforce, "sometimes", "hi", false, `plan_first: plan-first mode "sometimes" is not valid; use off, auto or always, or preview`},
		{"dawn.yaml auto, complex task", configured(t, "{mode: auto}"), enforce, "", complex, true, ""},
		{"dawn.yaml auto, question", configured(t, "{mode: auto}"), enforce, "", "What is our refund policy?", false, ""},
		{"dawn.yaml auto, high threshold", configured(t, "{mode: auto, threshold: 10}"), enforce, "", complex, false, ""},
		{"plan.md mode wins over dawn.yaml", configured(t, "{mode: always}"), "---\nenforce: true\nmode: off\n---\n", "", complex, false, ""},
		{"option wins over plan.md", marker{}, "---\nenforce: true\nmode: off\n---\n", "always", "hi", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := tt.m.Choose(prepare(t, tt.front, ""), tt.option, user(tt.task))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (run != nil) != tt.want {
				t.Errorf("plans first = %v, want %v", run != nil, tt.want)
			}
		})
	}
}

// TestStrategyRun: a plan-first run asks for a plan, runs its steps on
// their targets, keeps the harness plan in state, saves after every step
// and hands the plan and report to the agent loop.
func TestStrategyRun(t *testing.T) {
	p := prepare(t, "---\nenforce: true\n---\n", "researcher")
	run, err := marker{}.Choose(p, "always", nil)
	if err != nil || run == nil {
		t.Fatalf("Choose = %v, %v", run, err)
	}
	host := &fakeRunHost{answers: []string{"not a plan", offlinePlan("Check the account", []string{"researcher"})}}
	input := user("Check the account")
	history := []thread.Message{{Role: thread.RoleUser, Content: "earlier"}}
	res, err := run(context.Background(), host, history, p.InitialState(), input)
	if err != nil {
		t.Fatal(err)
	}
	if len(host.asked) != 2 || !strings.HasPrefix(host.asked[1][2].Content, "Your plan could not be used.") {
		t.Errorf("planner conversations = %v, want the feedback turn after a bad plan", host.asked)
	}
	if len(host.steps) != 3 || !strings.HasPrefix(host.steps[1], "E2 researcher: Work on the task using what step E1 found: result of E1") {
		t.Errorf("steps = %q", host.steps)
	}
	if res.Stop != "" || res.Output != nil {
		t.Errorf("stop %q output %s, want the loop to go on", res.Stop, res.Output)
	}
	// history, input, the plan, the report
	if n := len(res.Messages); n != 4 || !harness.Marked(res.Messages[2]) || !strings.HasPrefix(res.Messages[3].Content, ReportPrefix) {
		t.Fatalf("messages = %+v", res.Messages)
	}
	var hp harness.Plan
	if err := json.Unmarshal(res.Values[planning.PlanField], &hp); err != nil {
		t.Fatal(err)
	}
	if len(hp.Items) != 3 || hp.Items[2].Status != harness.Completed || hp.Items[0].Evidence != "result of E1" {
		t.Errorf("plan = %+v", hp)
	}
	if got := host.eventTypes(); got != "plan_update,step_started,step_finished,plan_update,step_started,step_finished,plan_update,step_started,step_finished,plan_update,plan_done" {
		t.Errorf("events = %s", got)
	}
	if len(host.saves) != 5 || len(host.added) != 3 {
		t.Errorf("%d saves adding %d messages, want 5 saves (plan, 3 steps, report) adding input, plan and report", len(host.saves), len(host.added))
	}
	if rec := res.Record.(map[string]any); rec["steps"] != 3 || rec["had_errors"] != false {
		t.Errorf("record = %v", rec)
	}
}

func TestStrategyPreview(t *testing.T) {
	p := prepare(t, "---\nenforce: true\n---\n", "")
	run, _ := marker{}.Choose(p, "preview", nil)
	host := &fakeRunHost{answers: []string{offlinePlan("Check", nil)}}
	res, err := run(context.Background(), host, nil, p.InitialState(), user("Check"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != "" || !strings.Contains(string(res.Output), `"order":["E1","E2","E3"]`) || len(host.steps) != 0 || len(host.saves) != 0 || host.eventTypes() != EventPlanPreview {
		t.Errorf("preview: stop %q output %s steps %v saves %d events %s", res.Stop, res.Output, host.steps, len(host.saves), host.eventTypes())
	}
	// The preview parks on a plan interrupt whose id the output names.
	if len(res.Interrupts) != 1 || res.Interrupts[0].Kind != PlanKind || !strings.Contains(string(res.Output), `"interruptId":"`+res.Interrupts[0].ID+`"`) || !strings.Contains(string(res.Park), `"E3"`) {
		t.Errorf("preview interrupts %+v, output %s, park %s", res.Interrupts, res.Output, res.Park)
	}
}

// TestStrategyStopsOnSignal: a supervisor's cancel between steps stops the
// plan, runs the route's Signal hooks and ends the run.
func TestStrategyStopsOnSignal(t *testing.T) {
	p := prepare(t, "---\nenforce: true\n---\n", "")
	run, _ := marker{}.Choose(p, "always", nil)
	host := &fakeRunHost{answers: []string{offlinePlan("Check", nil)}, signal: "cancel"}
	res, err := run(context.Background(), host, nil, p.InitialState(), user("Check"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != planning.StopCancelled || len(host.steps) != 0 {
		t.Errorf("stop %q after steps %v, want %s before any step", res.Stop, host.steps, planning.StopCancelled)
	}
	var hp harness.Plan
	_ = json.Unmarshal(res.Values[planning.PlanField], &hp)
	if hp.State != harness.Cancelled || !strings.Contains(host.eventTypes(), "plan_cancelled") {
		t.Errorf("plan state %s, events %s", hp.State, host.eventTypes())
	}
}

// diamondPlan is the planner's answer A -> (B, C) -> D.
const diamondPlan = `{"goal":"g","steps":[{"id":"A","task":"a"},{"id":"B","task":"b","deps":["A"]},{"id":"C","task":"c","deps":["A"]},{"id":"D","task":"d","deps":["B","C"]}]}`

// TestStrategyRunsIndependentStepsAtOnce: B and C wait only for A, so they
// run at once (each waits in RunStep until the other has started); the
// plan shows both in progress, the stream names the step of each
// step_started and step_finished, and plan.md's parallel: 1 runs one at a
// time.
func TestStrategyRunsIndependentStepsAtOnce(t *testing.T) {
	arrived := map[string]chan struct{}{"B": make(chan struct{}), "C": make(chan struct{})}
	other := map[string]string{"B": "C", "C": "B"}
	host := &fakeRunHost{answers: []string{diamondPlan}, stepGate: func(id string) {
		if o, ok := other[id]; ok {
			close(arrived[id])
			select {
			case <-arrived[o]:
			case <-time.After(10 * time.Second):
			}
		}
	}}
	p := prepare(t, "---\nenforce: true\n---\n", "")
	run, _ := marker{}.Choose(p, "always", nil)
	if _, err := run(context.Background(), host, nil, p.InitialState(), user("go")); err != nil {
		t.Fatal(err)
	}
	if host.peak != 2 {
		t.Errorf("at most %d steps ran at once, want 2 (the default parallel)", host.peak)
	}
	bothRunning := false
	var steps []string
	for _, e := range host.events {
		switch e.Type {
		case "plan_update":
			var d struct{ Todos []struct{ Status string } }
			_ = json.Unmarshal(e.Data, &d)
			if len(d.Todos) == 4 && d.Todos[1].Status == "in_progress" && d.Todos[2].Status == "in_progress" {
				bothRunning = true
			}
		case EventStepStarted, EventStepFinished:
			var d struct{ Step string }
			_ = json.Unmarshal(e.Data, &d)
			steps = append(steps, strings.TrimPrefix(e.Type, "step_")+" "+d.Step)
		}
	}
	if !bothRunning {
		t.Error("no plan_update shows B and C in progress together")
	}
	for _, id := range []string{"A", "B", "C", "D"} {
		s, f := slices.Index(steps, "started "+id), slices.Index(steps, "finished "+id)
		if s < 0 || f < s {
			t.Errorf("step events of %s out of order: %v", id, steps)
		}
	}

	one := &fakeRunHost{answers: []string{diamondPlan}}
	p = prepare(t, "---\nenforce: true\nparallel: 1\n---\n", "")
	run, _ = marker{}.Choose(p, "always", nil)
	if _, err := run(context.Background(), one, nil, p.InitialState(), user("go")); err != nil {
		t.Fatal(err)
	}
	if one.peak != 1 || len(one.steps) != 4 {
		t.Errorf("parallel: 1 ran %d steps, at most %d at once", len(one.steps), one.peak)
	}
}

func TestParallelSetting(t *testing.T) {
	if got := configured(t, "{parallel: 4}").parallelFor(prepare(t, "---\nenforce: true\n---\n", "")); got != 4 {
		t.Errorf("dawn.yaml parallel 4 gives %d", got)
	}
	if got := configured(t, "{parallel: 4}").parallelFor(prepare(t, "---\nenforce: true\nparallel: 3\n---\n", "")); got != 3 {
		t.Errorf("plan.md parallel 3 over dawn.yaml 4 gives %d", got)
	}
	if got := (marker{}).parallelFor(prepare(t, "---\nenforce: true\n---\n", "")); got != DefaultParallel {
		t.Errorf("default gives %d", got)
	}
	var doc yaml.Node
	_ = yaml.Unmarshal([]byte("{parallel: 0}"), &doc)
	if _, err := Marker().(capabilities.ConfigSection).Configure(map[string]*yaml.Node{ConfigKey: doc.Content[0]}); err == nil || !strings.Contains(err.Error(), "plan_first.parallel must be a whole number from 1 to 16") {
		t.Errorf("parallel: 0 gives %v", err)
	}
}
