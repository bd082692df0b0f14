package planfirst

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// echoRunner answers "out:<task>", and fails for tasks containing "FAIL".
func echoRunner(_ context.Context, _ Step, task string) (string, error) {
	if strings.Contains(task, "FAIL") {
		return "", errors.New("it broke")
	}
	return "out:" + task, nil
}

func mustPlan(t testing.TB, steps ...Step) *Plan {
	t.Helper()
	p := &Plan{Goal: "g", Steps: steps}
	if err := Validate(p); err != nil {
		t.Fatal(err)
	}
	return p
}

type summary struct {
	ID, Task string
	Status   Status
	Output   string
	Err      string
}

func summarize(r Report) []summary {
	var s []summary
	for _, st := range r.Steps {
		s = append(s, summary{st.Step.ID, st.Task, st.Status, st.Output, st.Err})
	}
	return s
}

func TestExecuteFailurePropagation(t *testing.T) {
	p := mustPlan(t,
		Step{ID: "E1", Task: "fetch"},
		Step{ID: "E2", Task: "FAIL on #E1"},
		Step{ID: "E3", Task: "use #E2 and #E1.summary"},
		Step{ID: "E4", Task: "last"},
	)
	var events []string
	r := Execute(context.Background(), p, echoRunner, func(ev Event) error {
		events = append(events, fmt.Sprintf("%d/%d %s %s", ev.Index, ev.Total, ev.StepID, ev.Status))
		return nil
	})
	want := []summary{
		{"E1", "fetch", Completed, "out:fetch", ""},
		{"E2", "FAIL on out:fetch", Failed, "", "it broke"},
		{"E3", "use [step E2 failed: it broke] and out:fetch", Completed, "out:use [step E2 failed: it broke] and out:fetch", ""},
		{"E4", "last", Completed, "out:last", ""},
	}
	if got := summarize(r); !reflect.DeepEqual(got, want) {
		t.Errorf("steps =\n%+v\nwant\n%+v", got, want)
	}
	if !r.HadErrors || r.Stopped || r.Goal != "g" {
		t.Errorf("HadErrors=%v Stopped=%v Goal=%q", r.HadErrors, r.Stopped, r.Goal)
	}
	wantEvents := []string{
		"0/4 E1 in_progress", "0/4 E1 completed",
		"1/4 E2 in_progress", "1/4 E2 failed",
		"2/4 E3 in_progress", "2/4 E3 completed",
		"3/4 E4 in_progress", "3/4 E4 completed",
	}
	if !reflect.DeepEqual(events, wantEvents) {
		t.Errorf("events =\n%q\nwant\n%q", events, wantEvents)
	}
}

// stopAt is an observer factory that returns err for step id's event
// with the given status.
func stopAt(id string, status Status, err error) func(context.CancelFunc) Observer {
	return func(context.CancelFunc) Observer {
		return func(ev Event) error {
			if ev.StepID == id && ev.Status == status {
				return err
			}
			return nil
		}
	}
}

// cancelAt is an observer factory that cancels the run's context at step
// id's event with the given status.
func cancelAt(id string, status Status) func(context.CancelFunc) Observer {
	return func(cancel context.CancelFunc) Observer {
		return func(ev Event) error {
			if ev.StepID == id && ev.Status == status {
				cancel()
			}
			return nil
		}
	}
}

// ctxRunner fails every step with its context's error.
func ctxRunner(ctx context.Context, _ Step, _ string) (string, error) {
	return "", ctx.Err()
}

// panicsOnE2 panics running E2 and answers "ok" for any other step.
func panicsOnE2(_ context.Context, s Step, _ string) (string, error) {
	if s.ID == "E2" {
		panic("boom")
	}
	return "ok", nil
}

func TestExecuteStops(t *testing.T) {
	steps := []Step{{ID: "E1", Task: "a"}, {ID: "E2", Task: "b"}, {ID: "E3", Task: "c"}}
	tests := []struct {
		name       string
		run        Runner
		observe    func(cancel context.CancelFunc) Observer
		want       []Status
		stopped    bool
		hadErrors  bool
		reasonPart string
	}{
		{"no stop", echoRunner, nil, []Status{Completed, Completed, Completed}, false, false, ""},
		{"stop before E2", echoRunner, stopAt("E2", InProgress, ErrStop),
			[]Status{Completed, Skipped, Skipped}, true, false, "stopped between steps"},
		{"stop after E1", echoRunner, stopAt("E1", Completed, errors.New("paused by supervisor")),
			[]Status{Completed, Skipped, Skipped}, true, false, "paused by supervisor"},
		{"stop after the last step leaves nothing out", echoRunner, stopAt("E3", Completed, ErrStop),
			[]Status{Completed, Completed, Completed}, false, false, ""},
		{"cancel between steps", echoRunner, cancelAt("E1", Completed),
			[]Status{Completed, Skipped, Skipped}, true, false, "cancelled: context canceled"},
		{"cancel during a step", ctxRunner, cancelAt("E2", InProgress),
			[]Status{Completed, Skipped, Skipped}, true, false, "cancelled: context canceled"},
		{"panic fails one step", panicsOnE2, nil, []Status{Completed, Failed, Completed}, false, true, ""},
		{"nil runner", nil, nil, []Status{Failed, Failed, Failed}, false, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var observe Observer
			if tt.observe != nil {
				observe = tt.observe(cancel)
			}
			p := mustPlan(t, steps...)
			r := Execute(ctx, p, tt.run, observe)
			var got []Status
			for _, s := range r.Steps {
				got = append(got, s.Status)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("statuses = %v, want %v", got, tt.want)
			}
			if r.Stopped != tt.stopped || r.HadErrors != tt.hadErrors {
				t.Errorf("Stopped=%v HadErrors=%v, want %v %v", r.Stopped, r.HadErrors, tt.stopped, tt.hadErrors)
			}
			if !strings.Contains(r.StopReason, tt.reasonPart) {
				t.Errorf("StopReason = %q, want it to contain %q", r.StopReason, tt.reasonPart)
			}
			for _, s := range r.Steps {
				if s.Status == Skipped && s.Err != r.StopReason {
					t.Errorf("skipped %s has reason %q, want %q", s.Step.ID, s.Err, r.StopReason)
				}
			}
		})
	}
}

func TestExecuteCancelDuringStepIsNotAFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := mustPlan(t, Step{ID: "E1", Task: "a"}, Step{ID: "E2", Task: "b"})
	r := Execute(ctx, p, func(ctx context.Context, s Step, _ string) (string, error) {
		cancel()
		return "", ctx.Err()
	}, nil)
	if r.Steps[0].Status != Skipped || r.HadErrors || !r.Stopped {
		t.Errorf("report = %+v", r)
	}
}

func TestExecutePanicMessage(t *testing.T) {
	p := mustPlan(t, Step{ID: "E1", Task: "a"})
	r := Execute(context.Background(), p, func(context.Context, Step, string) (string, error) { panic("boom") }, nil)
	if got := r.Steps[0].Err; got != "step panicked: boom" {
		t.Errorf("Err = %q", got)
	}
}

func TestResume(t *testing.T) {
	p := mustPlan(t,
		Step{ID: "E1", Task: "a"},
		Step{ID: "E2", Task: "FAIL b"},
		Step{ID: "E3", Task: "c #E1 #E2"},
	)
	first := Execute(context.Background(), p, echoRunner, func(ev Event) error {
		if ev.StepID == "E3" && ev.Status == InProgress {
			return ErrStop
		}
		return nil
	})
	if !first.Stopped {
		t.Fatal("first run did not stop")
	}
	var ran []string
	second := Resume(context.Background(), p, first, func(ctx context.Context, s Step, task string) (string, error) {
		ran = append(ran, s.ID)
		return echoRunner(ctx, s, task)
	}, nil)
	if !reflect.DeepEqual(ran, []string{"E3"}) {
		t.Errorf("ran %v, want only E3", ran)
	}
	want := []summary{
		{"E1", "a", Completed, "out:a", ""},
		{"E2", "FAIL b", Failed, "", "it broke"},
		{"E3", "c out:a [step E2 failed: it broke]", Completed, "out:c out:a [step E2 failed: it broke]", ""},
	}
	if got := summarize(second); !reflect.DeepEqual(got, want) {
		t.Errorf("steps =\n%+v\nwant\n%+v", got, want)
	}
	if second.Stopped || !second.HadErrors {
		t.Errorf("Stopped=%v HadErrors=%v", second.Stopped, second.HadErrors)
	}
}
