package planfirst

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// diamond is A -> (B, C) -> D.
func diamond(t testing.TB) *Plan {
	return mustPlan(t,
		Step{ID: "A", Task: "a"},
		Step{ID: "B", Task: "b from #A", Deps: []string{"A"}},
		Step{ID: "C", Task: "c from #A", Deps: []string{"A"}},
		Step{ID: "D", Task: "d from #B and #C", Deps: []string{"B", "C"}},
	)
}

// inFlight counts the runners running at once.
type inFlight struct {
	now, peak atomic.Int32
}

func (f *inFlight) enter() {
	n := f.now.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (f *inFlight) leave() { f.now.Add(-1) }

// TestExecuteParallelRunsIndependentStepsAtOnce: B and C both wait for A
// only, so with parallel 2 they run at the same time: neither returns
// until the other has started. The report keeps the plan's order, the
// observer is never called concurrently, and each step's events
// come in order.
func TestExecuteParallelRunsIndependentStepsAtOnce(t *testing.T) {
	var f inFlight
	arrived := map[string]chan struct{}{"B": make(chan struct{}), "C": make(chan struct{})}
	other := map[string]string{"B": "C", "C": "B"}
	run := func(ctx context.Context, s Step, task string) (string, error) {
		f.enter()
		defer f.leave()
		if o, ok := other[s.ID]; ok { // B and C each wait until the other runs
			close(arrived[s.ID])
			select {
			case <-arrived[o]:
			case <-time.After(10 * time.Second):
				return "", context.DeadlineExceeded // the other never ran beside it
			}
		}
		return "out:" + task, nil
	}
	var observing atomic.Bool
	var mu sync.Mutex
	var seen []string
	observe := func(ev Event) error {
		if !observing.CompareAndSwap(false, true) {
			t.Error("the observer was called concurrently")
		}
		defer observing.Store(false)
		mu.Lock()
		seen = append(seen, ev.StepID+":"+string(ev.Status))
		mu.Unlock()
		return nil
	}
	r := ExecuteParallel(context.Background(), diamond(t), 2, run, observe)
	if got := f.peak.Load(); got != 2 {
		t.Errorf("at most %d steps ran at once, want 2", got)
	}
	var ids []string
	for _, st := range r.Steps {
		ids = append(ids, st.Step.ID+":"+string(st.Status))
	}
	if want := []string{"A:completed", "B:completed", "C:completed", "D:completed"}; !slices.Equal(ids, want) {
		t.Errorf("report %v, want %v", ids, want)
	}
	if d := r.Steps[3]; d.Task != "d from out:b from out:a and out:c from out:a" {
		t.Errorf("D's task = %q", d.Task)
	}
	for _, id := range []string{"A", "B", "C", "D"} {
		started, ended := slices.Index(seen, id+":in_progress"), slices.Index(seen, id+":completed")
		if started < 0 || ended < started {
			t.Errorf("events of %s out of order: %v", id, seen)
		}
	}
	if slices.Index(seen, "D:in_progress") < max(slices.Index(seen, "B:completed"), slices.Index(seen, "C:completed")) {
		t.Errorf("D started before B and C ended: %v", seen)
	}
}

// TestExecuteParallelBound: never more than parallel steps at once, and
// parallel 1 (Execute) is one at a time in plan order.
func TestExecuteParallelBound(t *testing.T) {
	wide := mustPlan(t,
		Step{ID: "A", Task: "a"}, Step{ID: "B", Task: "b"}, Step{ID: "C", Task: "c"},
		Step{ID: "D", Task: "d"}, Step{ID: "E", Task: "e"}, Step{ID: "F", Task: "f", Deps: []string{"A", "E"}},
	)
	for _, parallel := range []int{1, 2, 3} {
		var f inFlight
		var order []string
		var mu sync.Mutex
		run := func(_ context.Context, s Step, task string) (string, error) {
			f.enter()
			defer f.leave()
			mu.Lock()
			order = append(order, s.ID)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond) // let the others catch up, if they may
			return task, nil
		}
		r := ExecuteParallel(context.Background(), wide, parallel, run, nil)
		if got := int(f.peak.Load()); got > parallel || (parallel > 1 && got < 2) {
			t.Errorf("parallel %d: peak %d steps at once", parallel, got)
		}
		if c, _, _ := r.Counts(); c != 6 {
			t.Errorf("parallel %d: %d steps completed", parallel, c)
		}
		if parallel == 1 && !slices.Equal(order, []string{"A", "B", "C", "D", "E", "F"}) {
			t.Errorf("parallel 1 ran %v, want plan order", order)
		}
	}
}

// TestExecuteParallelStop: an observer's stop lets the steps already
// running finish and report, starts none, and skips the rest in order.
func TestExecuteParallelStop(t *testing.T) {
	p := diamond(t)
	observe := func(ev Event) error {
		if ev.StepID == "B" && ev.Status == Completed {
			return ErrStop
		}
		return nil
	}
	release := make(chan struct{})
	run := func(_ context.Context, s Step, task string) (string, error) {
		if s.ID == "C" {
			<-release // still running when B ends
		}
		if s.ID == "B" {
			defer close(release)
		}
		return "ok", nil
	}
	r := ExecuteParallel(context.Background(), p, 2, run, observe)
	var got []string
	for _, st := range r.Steps {
		got = append(got, st.Step.ID+":"+string(st.Status))
	}
	if want := []string{"A:completed", "B:completed", "C:completed", "D:skipped"}; !slices.Equal(got, want) || !r.Stopped {
		t.Errorf("report %v stopped=%v, want %v stopped", got, r.Stopped, want)
	}
}

// BenchmarkDiamond times A -> (B, C) -> D with 10 ms steps: about 40 ms one
// at a time, about 30 ms with parallel 2.
func BenchmarkDiamond(b *testing.B) {
	p := diamond(b)
	run := func(context.Context, Step, string) (string, error) {
		time.Sleep(10 * time.Millisecond)
		return "ok", nil
	}
	for _, parallel := range []int{1, 2} {
		b.Run("parallel="+string(rune('0'+parallel)), func(b *testing.B) {
			for b.Loop() {
				ExecuteParallel(context.Background(), p, parallel, run, nil)
			}
		})
	}
}
