package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
)

// fakeSteps is a StepRunner whose steps run run, recording the events
// published and the peak of steps running at once.
type fakeSteps struct {
	run       func(ctx context.Context, id, task string) (string, error)
	signal    atomic.Value // string
	now, peak atomic.Int32

	mu     sync.Mutex
	events []stream.Event
}

func (f *fakeSteps) RunStep(ctx context.Context, callID string, target capabilities.StepTarget, task string) (string, error) {
	if target != (capabilities.StepTarget{}) {
		return "", errors.New("a fan-out item went to a subagent or route, not a worker")
	}
	n := f.now.Add(1)
	defer f.now.Add(-1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	who := stream.Subagent{CallID: callID, Name: "worker", RouteID: "/r", Depth: 1}
	f.Emit(stream.Forward(stream.New(stream.TypeModelCall, map[string]string{"task": task}), who))
	text, err := f.run(ctx, callID, task)
	f.Emit(stream.Forward(stream.New("done", map[string]string{"answer": text}), who))
	return text, err
}

func (f *fakeSteps) Emit(e stream.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

func (f *fakeSteps) Signal() string {
	s, _ := f.signal.Load().(string)
	return s
}

// trail is each event as "type:step", the step being an item id from
// "step" or a subagent event's "call_id".
func (f *fakeSteps) trail() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.events {
		var d struct {
			Step   string `json:"step"`
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(e.Data, &d)
		out = append(out, e.Type+":"+d.Step+d.CallID)
	}
	return out
}

func fanSettings(parallel int) Settings {
	s := settings()
	s.FanOut, s.Parallel = true, parallel
	return s
}

// TestFanOutRunsItemsAtOnce: with parallel 2, two items run at the same
// time (each waits until the other has started), never more than two;
// every item ends completed with its answer's first line as evidence, the
// results come in plan order, the plan is done, and each item's events
// come in order.
func TestFanOutRunsItemsAtOnce(t *testing.T) {
	s := fanSettings(2)
	p := started(t, s, 4)
	arrived := map[string]chan struct{}{}
	for _, it := range p.Items[:2] {
		arrived[it.ID] = make(chan struct{})
	}
	first, second := p.Items[0].ID, p.Items[1].ID
	steps := &fakeSteps{run: func(_ context.Context, id, task string) (string, error) {
		if other := map[string]string{first: second, second: first}[id]; other != "" {
			close(arrived[id])
			select {
			case <-arrived[other]:
			case <-time.After(10 * time.Second):
				return "", errors.New("the other item never ran beside this one")
			}
		}
		return "answer for " + task[strings.Index(task, ": ")+2:] + "\nmore detail", nil
	}}
	changes := 0
	report, err := FanOut(context.Background(), steps, p, s, func() { changes++ })
	if err != nil {
		t.Fatal(err)
	}
	if got := steps.peak.Load(); got != 2 {
		t.Errorf("peak %d items at once, want 2", got)
	}
	if p.State != Done {
		t.Errorf("plan %s, want done", p.State)
	}
	var got []string
	for i, r := range report.Results {
		got = append(got, r.ID+":"+string(r.Status))
		if r.ID != p.Items[i].ID || !strings.HasPrefix(r.Result, "answer for "+p.Items[i].Content+"\nDo this step only") || r.Attempts != 1 {
			t.Errorf("result %d = %+v", i, r)
		}
		if ev := p.Items[i].Evidence; ev != "answer for "+p.Items[i].Content {
			t.Errorf("item %d evidence %q", i, ev)
		}
	}
	if want := []string{"s0001:completed", "s0002:completed", "s0003:completed", "s0004:completed"}; !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
	if changes != 8 {
		t.Errorf("changed called %d times, want 8 (a start and an end per item)", changes)
	}
	trail := steps.trail()
	for _, it := range p.Items {
		want := []string{"step_started:" + it.ID, "subagent.model_call:" + it.ID, "subagent.done:" + it.ID, "step_finished:" + it.ID}
		var seen []string
		for _, e := range trail {
			if strings.HasSuffix(e, ":"+it.ID) {
				seen = append(seen, e)
			}
		}
		if !slices.Equal(seen, want) {
			t.Errorf("events of %s: %v, want %v", it.ID, seen, want)
		}
	}
}

// TestFanOutBound: never more than parallel items at once; parallel 1
// runs them one at a time in plan order; completed items do not run.
func TestFanOutBound(t *testing.T) {
	for _, parallel := range []int{1, 3} {
		s := fanSettings(parallel)
		p := started(t, s, 6)
		p.Items[2].Status, p.Items[2].Evidence = Completed, "done by the model"
		var mu sync.Mutex
		var order []string
		steps := &fakeSteps{run: func(_ context.Context, id, _ string) (string, error) {
			mu.Lock()
			order = append(order, id)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond) // let the others catch up, if they may
			return "ok " + id, nil
		}}
		report, err := FanOut(context.Background(), steps, p, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := int(steps.peak.Load()); got > parallel || (parallel > 1 && got < 2) {
			t.Errorf("parallel %d: peak %d", parallel, got)
		}
		if len(report.Results) != 5 || slices.Contains(order, "s0003") || p.Items[2].Evidence != "done by the model" {
			t.Errorf("parallel %d: ran %v, results %+v", parallel, order, report.Results)
		}
		if parallel == 1 && !slices.Equal(order, []string{"s0001", "s0002", "s0004", "s0005", "s0006"}) {
			t.Errorf("parallel 1 ran %v, want plan order", order)
		}
		if p.State != Done {
			t.Errorf("parallel %d: plan %s", parallel, p.State)
		}
	}
}

// TestFanOutRetryAndFail: a failing item runs again until it failed
// retry_cap times, then it is failed and, once every item ended, the plan
// fails; an item that fails once and then succeeds is completed.
func TestFanOutRetryAndFail(t *testing.T) {
	s := fanSettings(2)
	s.RetryCap = 3
	p := started(t, s, 3)
	var calls sync.Map // id -> *atomic.Int32
	steps := &fakeSteps{run: func(_ context.Context, id, _ string) (string, error) {
		n, _ := calls.LoadOrStore(id, new(atomic.Int32))
		k := n.(*atomic.Int32).Add(1)
		switch {
		case id == "s0001":
			return "", fmt.Errorf("lookup failed (%d)", k)
		case id == "s0002" && k == 1:
			return "", errors.New("flaky")
		case id == "s0003":
			panic("worker bug")
		}
		return "fine", nil
	}}
	report, err := FanOut(context.Background(), steps, p, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	count := func(id string) int32 {
		n, _ := calls.Load(id)
		return n.(*atomic.Int32).Load()
	}
	if count("s0001") != 3 || count("s0002") != 2 || count("s0003") != 3 {
		t.Errorf("runs: s0001 %d, s0002 %d, s0003 %d; want 3, 2, 3", count("s0001"), count("s0002"), count("s0003"))
	}
	want := []ItemResult{
		{ID: "s0001", Content: "a", Status: ItemFailed, Error: "lookup failed (3)", Attempts: 3},
		{ID: "s0002", Content: "b", Status: Completed, Result: "fine", Attempts: 2},
		{ID: "s0003", Content: "c", Status: ItemFailed, Error: "the worker panicked: worker bug", Attempts: 3},
	}
	if !slices.Equal(report.Results, want) {
		t.Errorf("results\n%+v\nwant\n%+v", report.Results, want)
	}
	if p.State != Failed || p.Items[0].Status != ItemFailed || p.Items[0].Evidence != "error: lookup failed (3)" || p.Items[1].Attempts != 1 {
		t.Errorf("plan %s, items %+v", p.State, p.Items)
	}
	retries := 0
	for _, e := range steps.trail() {
		if e == "step_finished:s0001" {
			retries++
		}
	}
	if retries != 3 {
		t.Errorf("s0001 finished %d times, want 3 (two retries and the failure)", retries)
	}
}

// TestFanOutStops: a pending supervisor signal, or the auto-advance budget
// pausing the plan, starts no further item; the items running finish and
// are recorded, and the rest stay open.
func TestFanOutStops(t *testing.T) {
	t.Run("signal", func(t *testing.T) {
		s := fanSettings(1)
		p := started(t, s, 3)
		steps := &fakeSteps{}
		steps.run = func(_ context.Context, id, _ string) (string, error) {
			steps.signal.Store("pause")
			return "ok", nil
		}
		report, err := FanOut(context.Background(), steps, p, s, nil)
		if err != nil || report.Stopped != "supervisor pause" || len(report.Results) != 1 {
			t.Fatalf("report %+v, err %v", report, err)
		}
		if p.State != Running || p.Items[0].Status != Completed || p.Items[2].Status != Pending {
			t.Errorf("plan %s, items %+v", p.State, p.Items)
		}
	})
	t.Run("budget", func(t *testing.T) {
		s := fanSettings(2)
		s.Budget = 2
		p, _ := Start(nil, s, seed(5), true)
		release := make(chan struct{})
		steps := &fakeSteps{run: func(_ context.Context, id, _ string) (string, error) {
			if id == "s0002" {
				<-release // still running when s0001 and s0003 end
			}
			if id == "s0003" {
				defer close(release)
			}
			return "ok", nil
		}}
		report, err := FanOut(context.Background(), steps, p, s, nil)
		if err != nil || !strings.HasPrefix(report.Stopped, "the plan paused (budget)") {
			t.Fatalf("report %+v, err %v", report, err)
		}
		if p.State != Paused || p.PauseReason != PauseBudget || len(report.Results) != 3 || p.Items[1].Status != Completed {
			t.Errorf("plan %s (%s), %d results", p.State, p.PauseReason, len(report.Results))
		}
		for _, it := range p.Items[3:] {
			if it.Status.Terminal() {
				t.Errorf("item %s ran after the pause", it.ID)
			}
		}
	})
}

// TestFanOutCancel: a cancelled context stops the fan-out: it waits for
// the items running and returns the context's error, leaving them open.
func TestFanOutCancel(t *testing.T) {
	s := fanSettings(2)
	p := started(t, s, 4)
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int32
	steps := &fakeSteps{run: func(ctx context.Context, _, _ string) (string, error) {
		if started.Add(1) == 2 {
			cancel()
		}
		<-ctx.Done()
		return "", ctx.Err()
	}}
	report, err := FanOut(ctx, steps, p, s, nil)
	if !errors.Is(err, context.Canceled) || len(report.Results) != 0 || started.Load() != 2 {
		t.Fatalf("err %v, results %+v, %d started", err, report.Results, started.Load())
	}
	for _, it := range p.Items {
		if it.Status.Terminal() || it.Attempts != 0 {
			t.Errorf("item %+v changed by a cancelled run", it)
		}
	}
}

// BenchmarkFanOut times six items of 10 ms each: about 60 ms one at a
// time, ceil(6/parallel) × 10 ms with parallel 2 and 3.
func BenchmarkFanOut(b *testing.B) {
	steps := &fakeSteps{run: func(context.Context, string, string) (string, error) {
		time.Sleep(10 * time.Millisecond)
		return "ok", nil
	}}
	for _, parallel := range []int{1, 2, 3} {
		s := fanSettings(parallel)
		b.Run(fmt.Sprintf("items=6/parallel=%d", parallel), func(b *testing.B) {
			for b.Loop() {
				p, _ := Start(nil, s, seed(6), true)
				steps.events = nil
				if _, err := FanOut(context.Background(), steps, p, s, nil); err != nil || p.State != Done {
					b.Fatalf("plan %s: %v", p.State, err)
				}
			}
		})
	}
}

// TestParseSettingsMode: mode takes ScaiGrid's sequential and parallel
// beside plan-first's modes; both turn plan-first off for the route, and
// bad values and parallel with advance: manual are errors naming the file,
// the line and the key.
func TestParseSettingsMode(t *testing.T) {
	cases := []struct {
		front        string
		mode         string
		fanOut       bool
		errs         []string
		parallelWant int
	}{
		{front: "enforce: true\nmode: parallel\n", mode: "off", fanOut: true},
		{front: "enforce: true\nmode: parallel\nparallel: 4\n", mode: "off", fanOut: true, parallelWant: 4},
		{front: "enforce: true\nmode: sequential\n", mode: "off"},
		{front: "enforce: true\nmode: auto\n", mode: "auto"},
		{front: "enforce: true\nmode: fanout\n", errs: []string{`plan.md:3: front matter key "mode": must be sequential or parallel (how the model's own plan runs), or off, auto, always or plan-first (when the harness plans first), not "fanout"`}},
		{front: "enforce: true\nmode: parallel\nadvance: manual\n", errs: []string{"plan.md: mode: parallel runs the plan's items at once, so advance: manual (wait for the user after each item) cannot hold; remove one of the two"}},
		{front: "enforce: true\nmode: parallel\nparallel: 40\n", errs: []string{`plan.md:4: front matter key "parallel": must be a whole number from 1 to 16`}},
		{front: "enforce: true\nmode: parallel\nparallel: 2.5\n", errs: []string{`plan.md:4: front matter key "parallel": must be a whole number from 1 to 16`}},
	}
	for _, tc := range cases {
		s, errs := ParseSettings("plan.md", tc.front)
		var got []string
		for _, err := range errs {
			got = append(got, err.Error())
		}
		if !slices.Equal(got, tc.errs) {
			t.Errorf("%q: errors %q, want %q", tc.front, got, tc.errs)
			continue
		}
		if tc.errs == nil && (s.Mode != tc.mode || s.FanOut != tc.fanOut || s.Parallel != tc.parallelWant) {
			t.Errorf("%q: mode %q, fan-out %v, parallel %d", tc.front, s.Mode, s.FanOut, s.Parallel)
		}
	}
}

// TestRenderFanOutRules: a parallel plan's prompt tells the model the
// harness runs the items and asks for self-contained items, instead of
// one item in_progress.
func TestRenderFanOutRules(t *testing.T) {
	s := fanSettings(2)
	p := started(t, s, 2)
	for _, text := range []string{RenderFull(p, s), RenderCompact(p, s)} {
		if !strings.Contains(text, "every open item runs at once on a worker") || strings.Contains(text, "Keep one item in_progress") {
			t.Errorf("prompt of a parallel plan:\n%s", text)
		}
	}
	if text := RenderFull(p, settings()); !strings.Contains(text, "Keep one item in_progress") || strings.Contains(text, "worker") {
		t.Errorf("prompt of a sequential plan:\n%s", text)
	}
}
