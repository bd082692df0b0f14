package harness_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// fanModel is the model of every agent of a parallel plan's run. The
// route's own agent (the one with writeTodos) plans items and, given the
// fan-out's result, answers with it; a worker (no writeTodos) answers its
// item's task with "result of <item>", after work(ctx, item) returns.
type fanModel struct {
	items []string
	work  func(ctx context.Context, item string) error

	now, peak atomic.Int32
	mu        sync.Mutex
	// workerTasks are the tasks the workers got, in the order they came.
	workerTasks []string
	// merged is the writeTodos result the route's agent was given.
	merged string
}

func (m *fanModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	planner := slices.ContainsFunc(o.Tools, func(t llms.Tool) bool { return t.Function != nil && t.Function.Name == "writeTodos" })
	// The last message of the conversation: the route's plan state block
	// follows it.
	last := msgs[len(msgs)-1]
	if i := slices.IndexFunc(msgs[1:], func(m llms.MessageContent) bool { return m.Role == llms.ChatMessageTypeSystem }); i >= 0 {
		last = msgs[i]
	}
	text := func(c llms.MessageContent) string {
		var b strings.Builder
		for _, p := range c.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				b.WriteString(p.Text)
			case llms.ToolCallResponse:
				b.WriteString(p.Content)
			}
		}
		return b.String()
	}
	if planner {
		if last.Role == llms.ChatMessageTypeTool {
			m.mu.Lock()
			m.merged = text(last)
			m.mu.Unlock()
			return reply("Merged answer: " + text(last)), nil
		}
		var todos []map[string]string
		for _, it := range m.items {
			todos = append(todos, map[string]string{"content": it, "status": "pending"})
		}
		args, _ := json.Marshal(map[string]any{"todos": todos, "reason": "split the research"})
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{{
			ID: "call_plan", Type: "function", FunctionCall: &llms.FunctionCall{Name: "writeTodos", Arguments: string(args)},
		}}}}}, nil
	}
	task := text(last)
	m.mu.Lock()
	m.workerTasks = append(m.workerTasks, task)
	m.mu.Unlock()
	n := m.now.Add(1)
	defer m.now.Add(-1)
	for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
	}
	item := ""
	for _, it := range m.items {
		if strings.Contains(task, ": "+it+"\n") {
			item = it
		}
	}
	if item == "" {
		return nil, fmt.Errorf("a worker got a task naming no item: %q", task)
	}
	if m.work != nil {
		if err := m.work(ctx, item); err != nil {
			return nil, err
		}
	}
	return reply("result of " + item), nil
}

func (m *fanModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func reply(text string) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text}}}
}

// serveFan serves an app whose /research route has a parallel plan with
// front matter front, every agent on model.
func serveFan(t testing.TB, front string, model llms.Model) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"research/agent.md": "You research cities.",
		"research/plan.md":  "---\nenforce: true\nmode: parallel\n" + front + "---\n",
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
	h := apptest.New(t, dir, model, apptest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	return srv.URL
}

const researchRun = `{"route":"/research","input":{"messages":[{"role":"user","content":"Compare the cities"}]}}`

func streamRun(t *testing.T, url, thread string) []stream.Event {
	t.Helper()
	resp, err := http.Post(url+"/threads/"+thread+"/runs/stream", "application/json", strings.NewReader(researchRun))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, data)
	}
	r := stream.NewReader(bufio.NewReader(resp.Body))
	var events []stream.Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return events
		}
		if err != nil {
			t.Fatalf("reading SSE: %v", err)
		}
		events = append(events, e)
	}
}

type threadPlan struct {
	State       string `json:"state"`
	PauseReason string `json:"pause_reason"`
	Items       []struct {
		ID       string `json:"id"`
		Content  string `json:"content"`
		Status   string `json:"status"`
		Evidence string `json:"evidence"`
		Attempts int    `json:"attempts"`
	} `json:"items"`
}

func (p threadPlan) statuses() string {
	var s []string
	for _, it := range p.Items {
		s = append(s, it.ID+"="+it.Status)
	}
	return strings.Join(s, ",")
}

func getPlan(t *testing.T, url, thread string) threadPlan {
	t.Helper()
	resp, err := http.Get(url + "/threads/" + thread + "/plan")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p threadPlan
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// stepOf is the item an event belongs to: "step" of step events, the
// call_id of subagent events.
func stepOf(e stream.Event) string {
	var d struct {
		Step   string `json:"step"`
		CallID string `json:"call_id"`
	}
	_ = json.Unmarshal(e.Data, &d)
	return d.Step + d.CallID
}

var cities = []string{"Find the population of Oslo", "Find the population of Lima", "Find the population of Pune", "Find the population of Kyiv"}

// TestParallelPlanOverHTTP: on a route with mode: parallel and parallel:
// 2, the model's accepted plan runs on workers two at a time (the first
// two wait for each other), every item is completed with its worker's
// answer as evidence, each item's events are in order and carry its id,
// writeTodos's result merges the results in plan order, and the model
// answers from it.
func TestParallelPlanOverHTTP(t *testing.T) {
	arrived := map[string]chan struct{}{cities[0]: make(chan struct{}), cities[1]: make(chan struct{})}
	other := map[string]string{cities[0]: cities[1], cities[1]: cities[0]}
	model := &fanModel{items: cities, work: func(ctx context.Context, item string) error {
		if o, ok := other[item]; ok {
			close(arrived[item])
			select {
			case <-arrived[o]:
			case <-time.After(10 * time.Second):
				return errors.New("the other item never ran beside this one")
			}
		}
		return nil
	}}
	url := serveFan(t, "parallel: 2\n", model)
	events := streamRun(t, url, "t1")

	if got := model.peak.Load(); got != 2 {
		t.Errorf("peak %d workers at once, want 2", got)
	}
	plan := getPlan(t, url, "t1")
	if plan.State != "done" || plan.statuses() != "s0001=completed,s0002=completed,s0003=completed,s0004=completed" {
		t.Fatalf("plan after the run: %+v", plan)
	}
	for i, it := range plan.Items {
		if it.Evidence != "result of "+cities[i] || it.Attempts != 0 {
			t.Errorf("item %d: %+v", i, it)
		}
	}
	var types []string
	perStep := map[string][]string{}
	for _, e := range events {
		types = append(types, e.Type)
		if id := stepOf(e); id != "" {
			perStep[id] = append(perStep[id], e.Type)
		}
	}
	for _, it := range plan.Items {
		if got := strings.Join(perStep[it.ID], ","); got != "step_started,subagent.start,subagent.model_call,subagent.end,step_finished" {
			t.Errorf("events of %s: %s", it.ID, got)
		}
	}
	all := strings.Join(types, ",")
	if !strings.HasPrefix(all, "plan_update,model_call,tool_call,step_started,plan_update,step_started,plan_update,") || !strings.HasSuffix(all, "tool_result,plan_update,plan_revised,plan_done,model_call,plan_update,done") {
		t.Errorf("events: %s", all)
	}
	var result struct {
		State   string `json:"state"`
		Results []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Result string `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(model.merged), &result); err != nil {
		t.Fatalf("writeTodos's result for the model: %v in %s", err, model.merged)
	}
	var got []string
	for _, r := range result.Results {
		got = append(got, r.ID+":"+r.Result)
	}
	want := []string{"s0001:result of " + cities[0], "s0002:result of " + cities[1], "s0003:result of " + cities[2], "s0004:result of " + cities[3]}
	if result.State != "done" || !slices.Equal(got, want) {
		t.Errorf("merged results %v (state %s), want %v", got, result.State, want)
	}
	if done := string(events[len(events)-1].Data); !strings.Contains(done, "Merged answer: ") {
		t.Errorf("the run's answer: %s", done)
	}
	tasks := slices.Sorted(slices.Values(model.workerTasks))
	if len(tasks) != 4 || tasks[0] != "Your step (1 of 4): "+cities[0]+"\nDo this step only and answer with its result." {
		t.Errorf("worker tasks: %q", model.workerTasks)
	}
}

// TestParallelPlanItemFails: a worker that keeps failing fails its item
// after retry_cap attempts, the others complete, the plan fails (an item
// failed) and the model still answers from the merged results.
func TestParallelPlanItemFails(t *testing.T) {
	model := &fanModel{items: cities[:3], work: func(_ context.Context, item string) error {
		if item == cities[1] {
			return errors.New("census site is down")
		}
		return nil
	}}
	url := serveFan(t, "retry_cap: 2\n", model)
	events := streamRun(t, url, "t1")
	plan := getPlan(t, url, "t1")
	if plan.State != "failed" || plan.statuses() != "s0001=completed,s0002=failed,s0003=completed" || plan.Items[1].Attempts != 2 {
		t.Fatalf("plan after the run: %+v", plan)
	}
	var finished []string
	for _, e := range events {
		if e.Type == "step_finished" && stepOf(e) == "s0002" {
			finished = append(finished, string(e.Data))
		}
	}
	if len(finished) != 2 || !strings.Contains(finished[0], `"retry":true`) || !strings.Contains(finished[1], "census site is down") {
		t.Errorf("step_finished of the failing item: %v", finished)
	}
	if !strings.Contains(model.merged, `"status":"failed"`) || !strings.Contains(model.merged, "census site is down") {
		t.Errorf("merged results lack the failure: %s", model.merged)
	}
	if types := strings.Join(typesOf(events), ","); !strings.HasSuffix(types, "plan_failed,model_call,plan_update,done") {
		t.Errorf("events: %s", types)
	}
}

func typesOf(events []stream.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

// TestParallelPlanSupervisor: a pause sent while items run starts no
// further item; the running ones finish and the run ends with the plan
// paused and the rest pending. A cancel sent while items run stops them and
// the run ends cancelled.
func TestParallelPlanSupervisor(t *testing.T) {
	for _, tc := range []struct {
		action string
		check  func(t *testing.T, started int, plan threadPlan, types string)
	}{
		{"pause", wantSupervisorPaused},
		{"cancel", wantSupervisorCancelled},
	} {
		t.Run(tc.action, func(t *testing.T) {
			model, url, events := signalWhileRunning(t, tc.action)
			types := strings.Join(typesOf(events), ",")
			plan := getPlan(t, url, "t1")
			tc.check(t, strings.Count(types, "step_started"), plan, types)
			if len(model.workerTasks) != 2 {
				t.Errorf("%d workers ran, want 2", len(model.workerTasks))
			}
		})
	}
}

// signalWhileRunning runs a parallel: 2 plan of four items on thread t1
// whose workers block, sends the supervisor action once both slots are
// busy, then lets the workers return, and gives the run's events.
func signalWhileRunning(t *testing.T, action string) (*fanModel, string, []stream.Event) {
	t.Helper()
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	model := &fanModel{items: cities, work: func(ctx context.Context, _ string) error {
		entered <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	url := serveFan(t, "parallel: 2\n", model)
	done := make(chan []stream.Event)
	go func() { done <- streamRun(t, url, "t1") }()
	<-entered
	<-entered // both slots busy
	resp, err := http.Post(url+"/threads/t1/plan/"+action, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d", action, resp.StatusCode)
	}
	close(release)
	return model, url, <-done
}

// wantSupervisorPaused checks a pause sent while two items ran: no
// further item started, the running ones finished, the plan is paused by
// the supervisor with the rest pending.
func wantSupervisorPaused(t *testing.T, started int, plan threadPlan, types string) {
	if started != 2 || plan.State != "paused" || plan.PauseReason != "supervisor" || plan.Items[0].Status != "completed" || plan.Items[3].Status != "pending" {
		t.Errorf("after pause: %d items started, plan %+v; events %s", started, plan, types)
	}
	if !strings.Contains(types, "plan_paused") {
		t.Errorf("no plan_paused: %s", types)
	}
}

// wantSupervisorCancelled checks a cancel sent while two items ran: no
// further item started, none completed, and the plan is cancelled.
func wantSupervisorCancelled(t *testing.T, started int, plan threadPlan, types string) {
	if started != 2 || plan.State != "cancelled" || strings.Contains(plan.statuses(), "completed") {
		t.Errorf("after cancel: %d items started, plan %+v; events %s", started, plan, types)
	}
}

// BenchmarkParallelPlanOverHTTP times whole runs over HTTP of a parallel
// plan of six items whose workers each take 20 ms (a slow model call):
// about 6 × 20 ms with parallel: 1, and ceil(6/parallel) × 20 ms plus the
// two planner calls and the saves with parallel 2 and 3.
func BenchmarkParallelPlanOverHTTP(b *testing.B) {
	items := []string{"Find the population of Oslo", "Find the population of Lima", "Find the population of Pune", "Find the population of Kyiv", "Find the population of Lagos", "Find the population of Quito"}
	for _, parallel := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("items=6/parallel=%d", parallel), func(b *testing.B) {
			model := &fanModel{items: items, work: func(context.Context, string) error {
				time.Sleep(20 * time.Millisecond)
				return nil
			}}
			url := serveFan(b, fmt.Sprintf("parallel: %d\n", parallel), model)
			n := 0
			for b.Loop() {
				n++
				resp, err := http.Post(fmt.Sprintf("%s/threads/b%d/runs/wait", url, n), "application/json", strings.NewReader(researchRun))
				if err != nil {
					b.Fatal(err)
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), "Merged answer") {
					b.Fatalf("run: %d %s", resp.StatusCode, data)
				}
			}
		})
	}
}

// TestParallelPlanApproved: with approval: required, the model's plan
// waits for a person and nothing runs; once approved, the resumed run fans
// the approved plan out.
func TestParallelPlanApproved(t *testing.T) {
	model := &fanModel{items: cities[:2]}
	url := serveFan(t, "approval: required\n", model)
	events := streamRun(t, url, "t1")
	var in struct {
		ID string `json:"interruptId"`
	}
	if types := strings.Join(typesOf(events), ","); !strings.HasSuffix(types, "tool_call,interrupt,done") || len(model.workerTasks) != 0 {
		t.Fatalf("events before approval: %s; %d workers ran", types, len(model.workerTasks))
	}
	if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"route":"/research","resume":[{"interruptId":%q,"status":"resolved","payload":"approve"}]}`, in.ID)
	resp, err := http.Post(url+"/threads/t1/resume", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Count(string(data), "event: step_finished") != 2 {
		t.Fatalf("resume: %d\n%s", resp.StatusCode, data)
	}
	if plan := getPlan(t, url, "t1"); plan.State != "done" || plan.statuses() != "s0001=completed,s0002=completed" {
		t.Fatalf("plan after approval: %+v", plan)
	}
}
