package runs_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/runs"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// stores are the two databases the service runs on: a SQLite file and a
// Postgres database.
var stores = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "dawn.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.Database(t) }},
}

// newService serves a one-route app (/job) whose every run answers with
// model, on a store at dsn.
func newService(t *testing.T, dsn string, model llms.Model) *runs.Service {
	t.Helper()
	dir := apptest.WriteApp(t, map[string]string{"job/agent.md": "You do the job."})
	a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := runner.New(st, a, runner.Options{
		Models: func(string) (llms.Model, error) { return model, nil },
		Env:    func(string) string { return "" },
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Shutdown(ctx)
	})
	return runs.New(m)
}

func as(user string) context.Context {
	return capabilities.WithIdentity(context.Background(), capabilities.Identity{User: user})
}

func job(threadID, text string) runner.Request {
	return runner.Request{ThreadID: threadID, Route: "/job", Messages: []thread.Message{{Role: thread.RoleUser, Content: text}}}
}

// waitCalls waits until model has been called n times.
func waitCalls(t *testing.T, model *dawntest.ScriptedModel, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); model.Calls() < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the model was called %d times, want %d", model.Calls(), n)
		}
	}
}

func waitDone(t *testing.T, run *runner.Run) {
	t.Helper()
	select {
	case <-run.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("run %s did not end", run.ID)
	}
}

// TestOwnership: another user's thread reads, runs and stops as one that
// does not exist, with the same error word for word; its owner reaches
// it, and searches hold only the caller's threads.
func TestOwnership(t *testing.T) {
	for _, db := range stores {
		t.Run(db.name, func(t *testing.T) { ownershipOn(t, db.dsn(t)) })
	}
}

func ownershipOn(t *testing.T, dsn string) {
	hold := make(chan struct{})
	model := dawntest.Script().Wait(hold).Reply("done").Repeat()
	svc := newService(t, dsn, model)
	ann, bob := as("ann"), as("bob")
	if _, err := svc.CreateThread(ann, "t-ann", nil); err != nil {
		t.Fatal(err)
	}
	_, missing := svc.GetThread(bob, "t-none")
	_, hidden := svc.GetThread(bob, "t-ann")
	if !errors.Is(hidden, store.ErrNotFound) || hidden.Error() != runs.MissingThread("t-ann").Error() {
		t.Fatalf("bob reads ann's thread: %v", hidden)
	}
	if missing.Error() != runs.MissingThread("t-none").Error() {
		t.Fatalf("a missing thread reads %q, want %q", missing, runs.MissingThread("t-none"))
	}
	// ann's run is in flight, held in its model call, while bob
	// tries every way to reach her thread.
	run, err := svc.Start(ann, job("t-ann", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	waitCalls(t, model, 1)
	bobReachesNothing(t, svc, bob, run)
	close(hold)
	waitDone(t, run)
	if run.Cancelled() || run.Err() != nil {
		t.Fatalf("ann's run was stopped by bob's requests: cancelled %v, err %v", run.Cancelled(), run.Err())
	}
	if _, err := svc.GetRun(bob, run.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob reads ann's run: %v", err)
	}
	if _, err := svc.GetRun(ann, run.ID); err != nil {
		t.Errorf("ann reads her run: %v", err)
	}
	for user, want := range map[string]int{"ann": 1, "bob": 0} {
		n, err := svc.CountThreads(as(user), store.ThreadQuery{})
		if err != nil || n != want {
			t.Errorf("%s counts %d threads (%v), want %d", user, n, err, want)
		}
	}
}

// TestAdmit: with a run in flight, reject refuses the next, enqueue queues
// it to start when the thread is free, and interrupt stops the run in
// flight and starts its own, reading what it starts from (Ready) once
// the thread is clear.
func TestAdmit(t *testing.T) {
	for _, db := range stores {
		t.Run(db.name, func(t *testing.T) { admitOn(t, db.dsn(t)) })
	}
}

func admitOn(t *testing.T, dsn string) {
	hold := make(chan struct{})
	model := dawntest.Script().Wait(hold).Reply("first").Reply("queued").Wait(make(chan struct{})).Reply("held").Reply("last")
	svc := newService(t, dsn, model)
	ctx := context.Background()
	first, _, err := svc.Admit(ctx, job("t1", "one"), runs.Admission{Strategy: runs.Reject})
	if err != nil || first == nil {
		t.Fatalf("first run: %v, %v", first, err)
	}
	if _, _, err := svc.Admit(ctx, job("t1", "two"), runs.Admission{Strategy: runs.Reject}); !runs.Busy(err) {
		t.Fatalf("reject with a run in flight: %v, want busy", err)
	}
	live, queued, err := svc.Admit(ctx, job("t1", "two"), runs.Admission{Strategy: runs.Enqueue})
	if err != nil || live != nil || queued.Status != store.RunPending {
		t.Fatalf("enqueue with a run in flight: live %v, queued %+v, %v", live, queued, err)
	}
	close(hold)
	waitDone(t, first)
	started, _, err := svc.AwaitQueued(ctx, queued)
	if err != nil {
		t.Fatal(err)
	}
	if started != nil {
		waitDone(t, started)
	}
	// The third run holds; interrupt stops it and starts the fourth.
	held, _, err := svc.Admit(ctx, job("t1", "three"), runs.Admission{Strategy: runs.Reject})
	if err != nil {
		t.Fatal(err)
	}
	waitCalls(t, model, 3)
	// What the run starts from is read once the thread is cleared:
	// Ready sees no run in flight.
	readies := 0
	var inFlight *runner.Run
	ready := func() { readies, inFlight = readies+1, svc.Active(ctx, "t1") }
	last, _, err := svc.Admit(ctx, job("t1", "four"), runs.Admission{Strategy: runs.Interrupt, Ready: ready})
	if err != nil || last == nil {
		t.Fatalf("interrupt: %v, %v", last, err)
	}
	if readies == 0 || inFlight != nil {
		t.Errorf("Ready was called %d times, with run %v in flight; want it called once the thread is clear", readies, inFlight)
	}
	waitDone(t, held)
	if !held.Cancelled() {
		t.Error("the run interrupt stopped is not cancelled")
	}
	waitDone(t, last)
	if err := last.Err(); err != nil {
		t.Errorf("the interrupting run failed: %v", err)
	}
}

// bobReachesNothing: every way bob has to reach ann's thread t-ann, with
// run in flight on it, answers not found and changes nothing.
func bobReachesNothing(t *testing.T, svc *runs.Service, bob context.Context, run *runner.Run) {
	t.Helper()
	checks := map[string]error{}
	_, checks["Start"] = svc.Start(bob, job("t-ann", "hi"))
	_, _, checks["Admit interrupt"] = svc.Admit(bob, job("t-ann", "hi"), runs.Admission{Strategy: runs.Interrupt})
	_, _, checks["Admit rollback"] = svc.Admit(bob, job("t-ann", "hi"), runs.Admission{Strategy: runs.Rollback})
	_, _, checks["Admit enqueue"] = svc.Admit(bob, job("t-ann", "hi"), runs.Admission{Strategy: runs.Enqueue})
	checks["ClearThread"] = svc.ClearThread(bob, "t-ann", true)
	checks["DeleteThread"] = svc.DeleteThread(bob, "t-ann")
	_, checks["Latest"] = svc.Latest(bob, "t-ann")
	_, checks["RollbackRun"] = svc.RollbackRun(bob, store.Run{ID: run.ID, ThreadID: "t-ann"}, true)
	for name, err := range checks {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("bob's %s on ann's thread: %v, want not found", name, err)
		}
	}
	if got, _ := svc.Cancel(bob, "t-ann"); got != nil {
		t.Error("bob cancelled a run on ann's thread")
	}
	if svc.Active(bob, "t-ann") != nil {
		t.Error("bob sees ann's run in flight")
	}
	if queued, err := svc.Runner().Store().QueuedRuns(context.Background(), "t-ann"); err != nil || len(queued) != 0 {
		t.Errorf("ann's thread has queued runs %v (%v) after bob's requests", queued, err)
	}
}
