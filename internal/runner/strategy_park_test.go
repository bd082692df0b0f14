package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

// parkingStrategy is a run strategy the runtime has never heard of that
// saves a note, parks on one interrupt and, resumed, adds the answer to
// the conversation before the agent loop.
type parkingStrategy struct{}

func (parkingStrategy) Name() string                 { return "parker" }
func (parkingStrategy) Detect(string) (string, bool) { return "", false }
func (parkingStrategy) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}
func (parkingStrategy) RunOption() string { return "park_mode" }

func (parkingStrategy) Choose(_ *capabilities.Prepared, option string, _ []thread.Message) (capabilities.StrategyRun, error) {
	if option == "" {
		return nil, nil
	}
	return func(ctx context.Context, host capabilities.RunHost, history []thread.Message, values thread.State, input []thread.Message) (capabilities.StrategyResult, error) {
		note := thread.Message{Role: thread.RoleAssistant, Content: "a note before asking"}
		added := append(slices.Clone(input), note)
		if err := host.Save(ctx, added, values); err != nil {
			return capabilities.StrategyResult{}, err
		}
		asked := thread.Message{Role: thread.RoleAssistant, Content: "asking"}
		return capabilities.StrategyResult{
			Messages:   append(append(history, added...), asked),
			Values:     values,
			Interrupts: []capabilities.Interrupt{{ID: "ask-1", Kind: "fake", Detail: json.RawMessage(`{"q":"go on?"}`)}},
			Park:       json.RawMessage(`{"secret":"kept"}`),
		}, nil
	}, nil
}

// resumingStrategy is parkingStrategy with a StrategyResumer.
type resumingStrategy struct{ parkingStrategy }

func (resumingStrategy) Resume(r capabilities.ParkedRun) (capabilities.StrategyRun, error) {
	var word string
	if err := json.Unmarshal(r.Answers[0].Payload, &word); err != nil || word != "yes" {
		return nil, errors.New(`resume[0]: answer "yes"`)
	}
	return func(ctx context.Context, host capabilities.RunHost, history []thread.Message, values thread.State, input []thread.Message) (capabilities.StrategyResult, error) {
		msg := thread.Message{Role: thread.RoleUser, Content: "resumed with " + string(r.Data)}
		if err := host.Save(ctx, []thread.Message{msg}, values); err != nil {
			return capabilities.StrategyResult{}, err
		}
		return capabilities.StrategyResult{Messages: append(history, msg), Values: values}, nil
	}, nil
}

func jobDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "job"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job", "agent.md"), []byte("You do the job."), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func contents(msgs []thread.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return strings.Join(out, "|")
}

// TestStrategyParksAndResumes: a strategy's interrupts park the run with
// what it saved and what it did not (each message once), keep its data in
// the store, and a resume hands the data and answers back to its
// StrategyResumer, after a restart on the same file; a bad answer is a
// ResumeError that changes nothing.
func TestStrategyParksAndResumes(t *testing.T) {
	dir, db := jobDir(t), filepath.Join(t.TempDir(), "dawn.db")
	ctx := context.Background()
	h := apptest.New(t, dir, dawntest.Script(), apptest.Options{StorePath: db, Markers: append(markers.All(), resumingStrategy{})})
	run, err := h.Runs.Start(ctx, runner.Request{ThreadID: "p", Route: "/job", Messages: []thread.Message{{Role: thread.RoleUser, Content: "go"}}, Options: map[string]string{"park_mode": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	if run.Err() != nil || len(run.Interrupts()) != 1 || run.Interrupts()[0].Type != capabilities.InterruptType {
		t.Fatalf("parked run: %v, interrupts %+v", run.Err(), run.Interrupts())
	}
	cp, err := h.Store.Latest(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(cp.Messages); got != "go|a note before asking|asking" {
		t.Fatalf("parked messages: %s", got)
	}
	if string(cp.Values[capabilities.StrategyKey]) != `{"option":"park_mode","data":{"secret":"kept"}}` || !strings.Contains(string(cp.Values[capabilities.InterruptsKey]), `"ask-1"`) {
		t.Fatalf("parked values: %v", cp.Values)
	}
	h.Runs.Shutdown(ctx)
	if err := h.Store.Close(); err != nil {
		t.Fatal(err)
	}

	model := dawntest.Script().Reply("done")
	h = apptest.New(t, dir, model, apptest.Options{StorePath: db, Markers: append(markers.All(), resumingStrategy{})})
	var re *runner.ResumeError
	for _, a := range []capabilities.Answer{
		{InterruptID: "ask-1", Status: "resolved", Payload: json.RawMessage(`"no"`)},
		{InterruptID: "ask-2", Status: "resolved", Payload: json.RawMessage(`"yes"`)},
	} {
		if _, err := h.Runs.Resume(ctx, runner.ResumeRequest{ThreadID: "p", Route: "/job", Answers: []capabilities.Answer{a}}); !errors.As(err, &re) {
			t.Fatalf("resume with %+v: %v, want a ResumeError", a, err)
		}
	}
	if after, _ := h.Store.Latest(ctx, "p"); after.Step != cp.Step {
		t.Fatalf("a refused resume saved step %d", after.Step)
	}
	run, err = h.Runs.Resume(ctx, runner.ResumeRequest{ThreadID: "p", Route: "/job", Answers: []capabilities.Answer{{InterruptID: "ask-1", Status: "resolved", Payload: json.RawMessage(`"yes"`)}}})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	cp, _ = h.Store.Latest(ctx, "p")
	if run.Err() != nil || model.Calls() != 1 || contents(cp.Messages) != `go|a note before asking|asking|resumed with {"secret":"kept"}|done` {
		t.Fatalf("resumed: %v, %d model calls, messages %s", run.Err(), model.Calls(), contents(cp.Messages))
	}
	if _, ok := cp.Values[capabilities.StrategyKey]; ok {
		t.Fatalf("the answered park stayed in the state: %v", cp.Values)
	}
	if _, ok := cp.Values[capabilities.InterruptsKey]; ok {
		t.Fatalf("the answered interrupts stayed in the state: %v", cp.Values)
	}
}

// TestStrategyParkNeedsResumer: a strategy that parks without a
// StrategyResumer fails the run rather than leave a thread nobody can
// resume; a thread parked by a strategy the app no longer has can still be
// cancelled, which clears it.
func TestStrategyParkNeedsResumer(t *testing.T) {
	ctx := context.Background()
	h := apptest.New(t, jobDir(t), dawntest.Script(), apptest.Options{Markers: append(markers.All(), parkingStrategy{})})
	run, err := h.Runs.Start(ctx, runner.Request{ThreadID: "n", Route: "/job", Messages: []thread.Message{{Role: thread.RoleUser, Content: "go"}}, Options: map[string]string{"park_mode": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	if run.Err() == nil || !strings.Contains(run.Err().Error(), "StrategyResumer") || run.Interrupts() != nil {
		t.Fatalf("a park without a resumer: %v, interrupts %+v", run.Err(), run.Interrupts())
	}

	dir, db := jobDir(t), filepath.Join(t.TempDir(), "dawn.db")
	h = apptest.New(t, dir, dawntest.Script(), apptest.Options{StorePath: db, Markers: append(markers.All(), resumingStrategy{})})
	run, err = h.Runs.Start(ctx, runner.Request{ThreadID: "g", Route: "/job", Messages: []thread.Message{{Role: thread.RoleUser, Content: "go"}}, Options: map[string]string{"park_mode": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	h.Runs.Shutdown(ctx)
	if err := h.Store.Close(); err != nil {
		t.Fatal(err)
	}
	h = apptest.New(t, dir, dawntest.Script(), apptest.Options{StorePath: db}) // the strategy is gone
	var re *runner.ResumeError
	if _, err := h.Runs.Resume(ctx, runner.ResumeRequest{ThreadID: "g", Route: "/job", Answers: []capabilities.Answer{{InterruptID: "ask-1", Status: "resolved", Payload: json.RawMessage(`"yes"`)}}}); !errors.As(err, &re) || !strings.Contains(err.Error(), `"cancelled"`) {
		t.Fatalf("resolving a park of a gone strategy: %v", err)
	}
	run, err = h.Runs.Resume(ctx, runner.ResumeRequest{ThreadID: "g", Route: "/job", Answers: []capabilities.Answer{{InterruptID: "ask-1", Status: "cancelled"}}})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	cp, _ := h.Store.Latest(ctx, "g")
	if pending, _ := capabilities.PendingInterrupts(cp.Values); run.Err() != nil || len(pending) != 0 || cp.Values[capabilities.StrategyKey] != nil {
		t.Fatalf("cancelled: %v, values %v", run.Err(), cp.Values)
	}
	th, err := h.Store.GetThread(ctx, "g")
	if err != nil || th.Status != "idle" {
		t.Fatalf("thread after the cancel: %+v (%v)", th, err)
	}
}
