package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
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
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// fakeStrategy is a run strategy of a capability the runtime has never
// heard of, steered by the run option "fake_mode".
type fakeStrategy struct{}

func (fakeStrategy) Name() string                 { return "fake" }
func (fakeStrategy) Detect(string) (string, bool) { return "", false }
func (fakeStrategy) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}
func (fakeStrategy) RunOption() string { return "fake_mode" }

func (fakeStrategy) Choose(_ *capabilities.Prepared, option string, _ []thread.Message) (capabilities.StrategyRun, error) {
	switch option {
	case "":
		return nil, nil
	case "stop":
		return func(_ context.Context, host capabilities.RunHost, history []thread.Message, values thread.State, input []thread.Message) (capabilities.StrategyResult, error) {
			host.Emit(stream.New("fake_stopped", map[string]string{}))
			return capabilities.StrategyResult{Messages: append(history, input...), Values: values, Stop: "fake_stop", Output: json.RawMessage(`{"fake":true}`)}, nil
		}, nil
	case "go":
		return func(ctx context.Context, host capabilities.RunHost, history []thread.Message, values thread.State, input []thread.Message) (capabilities.StrategyResult, error) {
			note := thread.Message{Role: thread.RoleUser, Content: "fake note", Meta: map[string]json.RawMessage{"fake": json.RawMessage(`1`)}}
			added := append(slices.Clone(input), note)
			if err := host.Save(ctx, added, values); err != nil {
				return capabilities.StrategyResult{}, err
			}
			host.Emit(stream.New("fake_event", map[string]string{}))
			return capabilities.StrategyResult{Messages: append(history, added...), Values: values, Record: map[string]int{"n": 1}}, nil
		}, nil
	}
	return nil, errors.New("fake_mode must be stop or go")
}

// TestRunStrategyThroughMarkers: the runner and the server run a marker's
// RunStrategy by its option alone: a bad option is the client's mistake, a
// Stop ends the run with the strategy's output and no model call, and a
// strategy that goes on hands the loop its messages (metadata kept) and
// leaves its record in the run's record under its option.
func TestRunStrategyThroughMarkers(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "job"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job", "agent.md"), []byte("You do the job."), 0o644); err != nil {
		t.Fatal(err)
	}
	model := dawntest.Script().Reply("done")
	h := apptest.New(t, dir, model, apptest.Options{Markers: append(markers.All(), fakeStrategy{})})
	ctx := context.Background()
	start := func(id, mode string) (*runner.Run, error) {
		return h.Runs.Start(ctx, runner.Request{ThreadID: id, Route: "/job", Messages: []thread.Message{{Role: thread.RoleUser, Content: "go"}}, Options: map[string]string{"fake_mode": mode}})
	}

	var ie *runner.InputError
	if _, err := start("bad", "sideways"); !errors.As(err, &ie) || !strings.Contains(err.Error(), "fake_mode") {
		t.Fatalf("bad option: %v, want an InputError naming fake_mode", err)
	}

	url := h.Serve(t)
	resp, err := http.Post(url+"/threads/s/runs/wait", "application/json", strings.NewReader(`{"route":"/job","fake_mode":"stop","input":{"messages":[{"role":"user","content":"go"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"fake":true}` || model.Calls() != 0 {
		t.Fatalf("stop over HTTP: %d %s, %d model calls", resp.StatusCode, body, model.Calls())
	}

	run, err := start("g", "go")
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	if run.Err() != nil || model.Calls() != 1 || !slices.Contains(dawntest.Types(run.Log.Since(0)), "fake_event") {
		t.Fatalf("go: %v, %d model calls, events %v", run.Err(), model.Calls(), dawntest.Types(run.Log.Since(0)))
	}
	cp, err := h.Store.Latest(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cp.Messages); n != 3 || string(cp.Messages[1].Meta["fake"]) != "1" || cp.Messages[2].Content != "done" {
		t.Fatalf("saved messages = %+v", cp.Messages)
	}
	runs, err := h.Store.Runs(ctx, "g")
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %+v (%v)", runs, err)
	}
	var rec struct {
		Fake struct{ N int } `json:"fake_mode"`
	}
	if err := json.Unmarshal(runs[0].Output, &rec); err != nil || rec.Fake.N != 1 {
		t.Fatalf("run record = %s (%v)", runs[0].Output, err)
	}
}
