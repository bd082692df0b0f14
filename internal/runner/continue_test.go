package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/thread"
)

// noteIn is the input of the note tool.
type noteIn struct {
	Text string `json:"text"`
}

// notes records, per call of the note tool, who sent the run (the run's
// identity) and the route's team parameter.
type notes struct {
	mu   sync.Mutex
	seen []string
}

func (n *notes) tool() capabilities.AppTool {
	return capabilities.AppTool{Tool: capabilities.Func("note", "takes a note", func(ctx context.Context, in noteIn) (string, error) {
		inv, _ := capabilities.InvocationFrom(ctx)
		id, _ := capabilities.IdentityFrom(ctx)
		n.mu.Lock()
		defer n.mu.Unlock()
		n.seen = append(n.seen, in.Text+" by "+id.User+" for "+inv.Params["team"])
		return "noted", nil
	})}
}

func (n *notes) list() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.seen...)
}

// writeApp writes files into a new app folder.
func writeApp(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cutOff starts a run on /desk/acme, as user ana, on a store at path whose
// model takes a note and then hangs; once the note's turn is saved, the
// store closes, as its process would end: its runs have no owner any more.
// It returns the run's id and a function that lets the hung model go.
func cutOff(t *testing.T, dir, path string, n *notes) (runID string, release func()) {
	t.Helper()
	hang := make(chan struct{})
	model := dawntest.Script().CallTool("note", noteIn{Text: "first"}).Wait(hang).Reply("never")
	h := apptest.New(t, dir, model, apptest.Options{StorePath: path, Tools: []capabilities.AppTool{n.tool()}})
	ctx := capabilities.WithIdentity(context.Background(), capabilities.Identity{User: "ana"})
	run, err := h.Runs.Start(ctx, runner.Request{ThreadID: "t1", Route: "/desk/acme", Messages: []thread.Message{{Role: thread.RoleUser, Content: "take notes"}}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cp, err := h.Store.Latest(context.Background(), "t1")
		if err == nil && len(cp.Messages) == 3 { // user, call, result
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the note's turn was not saved within 10s (%v)", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := h.Store.Close(); err != nil {
		t.Fatal(err)
	}
	return run.ID, func() { close(hang) }
}

// TestContinueCarriesRequest: a run whose store went away is continued by
// another manager on the same database, from its saved step, with the
// route's parameters and the identity of the request that started it.
func TestContinueCarriesRequest(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"dawn.yaml":            "runs:\n  continue_orphans: true\n",
		"desk/[team]/agent.md": "You take notes.",
	})
	path := filepath.Join(t.TempDir(), "dawn.db")
	n := &notes{}
	runID, release := cutOff(t, dir, path, n)
	defer release()

	gate := make(chan struct{}) // holds the continued run until the test has it
	model := dawntest.Script().Wait(gate).CallTool("note", noteIn{Text: "second"}).Reply("all noted")
	b := apptest.New(t, dir, model, apptest.Options{StorePath: path, Tools: []capabilities.AppTool{n.tool()}})
	continued, interrupted, err := b.Runs.ContinueOrphans(context.Background())
	if err != nil || continued != 1 || interrupted != 0 {
		t.Fatalf("ContinueOrphans = %d continued, %d interrupted, %v; want the run continued", continued, interrupted, err)
	}
	run := b.Runs.Active("t1")
	if run == nil || run.ID != runID {
		t.Fatalf("the run in flight on t1 is %+v, want run %s", run, runID)
	}
	close(gate)
	<-run.Done()
	if run.Err() != nil {
		t.Fatal(run.Err())
	}
	r, err := b.Store.GetRun(context.Background(), runID)
	if err != nil || r.Status != store.RunSuccess {
		t.Fatalf("the continued run is %+v (%v), want success", r, err)
	}
	if got := n.list(); len(got) != 2 || got[1] != "second by ana for acme" {
		t.Errorf("notes %v; the continued run's tool must see the request's identity and parameters", got)
	}
	cp, err := b.Store.Latest(context.Background(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Messages) != 6 || cp.Messages[0].Content != "take notes" || cp.Messages[5].Content != "all noted" {
		t.Errorf("the thread holds %d messages after the continuation, want the input once, two notes and the answer: %+v", len(cp.Messages), cp.Messages)
	}
}

// TestContinueFallsBackToInterrupted: a claimed run whose route is gone
// from the app cannot go on; it is marked interrupted with the reason,
// and its thread takes a new run.
func TestContinueFallsBackToInterrupted(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"dawn.yaml":            "runs:\n  continue_orphans: true\n",
		"desk/[team]/agent.md": "You take notes.",
	})
	path := filepath.Join(t.TempDir(), "dawn.db")
	n := &notes{}
	runID, release := cutOff(t, dir, path, n)
	defer release()

	other := writeApp(t, map[string]string{
		"dawn.yaml":     "runs:\n  continue_orphans: true\n",
		"help/agent.md": "You help.",
	})
	b := apptest.New(t, other, dawntest.Script().Reply("hello"), apptest.Options{StorePath: path, Tools: []capabilities.AppTool{n.tool()}})
	continued, interrupted, err := b.Runs.ContinueOrphans(context.Background())
	if err != nil || continued != 0 || interrupted != 1 {
		t.Fatalf("ContinueOrphans = %d continued, %d interrupted, %v; want the run interrupted", continued, interrupted, err)
	}
	r, err := b.Store.GetRun(context.Background(), runID)
	if err != nil || r.Status != store.RunInterrupted || r.Error == "" {
		t.Fatalf("the run is %+v (%v), want interrupted with a reason", r, err)
	}
	if res := b.Run(t, "t1", "/help", "hi"); res.Err != nil {
		t.Fatalf("a new run on the thread: %v", res.Err)
	}
}
