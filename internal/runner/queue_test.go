package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// TestEnqueue: Enqueue checks a request as Start does; a queued run
// starts when the thread's run ends, with the id it was queued under; one
// whose route is gone by then ends with an error naming the route, and
// the queue goes on behind it.
func TestEnqueue(t *testing.T) {
	gate := make(chan struct{})
	model := dawntest.Script().Wait(gate).Reply("first").Reply("third")
	h := apptest.New(t, apptest.SupportApp(t), model, apptest.Options{})
	ctx := context.Background()
	say := func(route, text string) runner.Request {
		return runner.Request{ThreadID: "th", Route: route, Messages: []thread.Message{{Role: thread.RoleUser, Content: text}}}
	}
	first, err := h.Runs.Start(ctx, say("/plain", "one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Runs.Enqueue(ctx, say("/nowhere", "x"), time.Time{}); err == nil {
		t.Error("a request for an unknown route was queued")
	}
	var in *runner.InputError
	if _, err := h.Runs.Enqueue(ctx, runner.Request{ThreadID: "th", Route: "/plain"}, time.Time{}); !errors.As(err, &in) {
		t.Errorf("a request without messages: %v, want an InputError", err)
	}
	doomed, err := h.Runs.Enqueue(ctx, say("/support/acme", "two"), time.Time{})
	if err != nil || doomed.Status != store.RunPending {
		t.Fatalf("enqueue: %+v %v", doomed, err)
	}
	kept, err := h.Runs.Enqueue(ctx, say("/plain", "three"), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// The support route goes away before the thread is free.
	dir := apptest.WriteApp(t, map[string]string{"plain/agent.md": "No plan here."})
	next, err := app.Load(ctx, dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	h.Runs.SetApp(next)
	close(gate)
	<-first.Done()
	// No sweep runs here: the end of the first run starts the queue.
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := h.Runs.AwaitStart(waitCtx, kept.ID)
	if err != nil {
		t.Fatalf("the run queued behind the doomed one did not start: %v", err)
	}
	for r.Status == store.RunRunning {
		time.Sleep(5 * time.Millisecond)
		if r, err = h.Store.GetRun(ctx, kept.ID); err != nil {
			t.Fatal(err)
		}
	}
	if r.Status != store.RunSuccess {
		t.Errorf("the run queued behind the doomed one ended %s %s", r.Status, r.Error)
	}
	d, err := h.Store.GetRun(ctx, doomed.ID)
	if err != nil || d.Status != store.RunError || !strings.Contains(d.Error, "/support/acme") {
		t.Errorf("the run whose route is gone: %+v %v, want an error naming the route", d, err)
	}
}

// countingStore counts the reads of whether any run is queued.
type countingStore struct {
	store.Store
	mu        sync.Mutex
	anyQueued int
}

func (c *countingStore) AnyQueued(ctx context.Context) (bool, error) {
	c.mu.Lock()
	c.anyQueued++
	c.mu.Unlock()
	return c.Store.AnyQueued(ctx)
}

func (c *countingStore) reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.anyQueued
}

// TestRunEndReadsQueueOnce: the end of a run under a --max-runs cap looks
// once whether any run is queued, for its thread's queue and the other
// threads' alike (it looked twice: a read transaction per run).
func TestRunEndReadsQueueOnce(t *testing.T) {
	ctx := context.Background()
	a, err := app.Load(ctx, apptest.SupportApp(t), app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	counted := &countingStore{Store: st}
	model := dawntest.Script().Reply("one").Reply("two").Reply("three")
	runs := runner.New(counted, a, runner.Options{
		Models: func(string) (llms.Model, error) { return model, nil }, Env: func(string) string { return "" }, MaxRuns: 4,
	})
	const n = 3
	for i := range n {
		run, err := runs.Start(ctx, runner.Request{ThreadID: fmt.Sprintf("th%d", i), Route: "/plain",
			Messages: []thread.Message{{Role: thread.RoleUser, Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		<-run.Done()
	}
	// The read follows the run's end; give the last one time to happen.
	deadline := time.Now().Add(5 * time.Second)
	for counted.reads() < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if got := counted.reads(); got != n {
		t.Errorf("%d runs read whether any run is queued %d times, want %d", n, got, n)
	}
}
