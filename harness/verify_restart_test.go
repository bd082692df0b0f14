package harness_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/thread"
)

// withVerifier returns opts with the planning marker's verifiers replaced
// by the one named notesWritten, fn.
func withVerifier(opts apptest.Options, fn harness.VerifierFunc) apptest.Options {
	ms := append(opts.Markers[:0:0], opts.Markers...)
	for i, m := range ms {
		if m.Name() == planning.Name {
			ms[i] = planning.MarkerWith(map[string]harness.VerifierFunc{"notesWritten": fn})
		}
	}
	opts.Markers = ms
	return opts
}

// TestVerifierAfterRestart: the server stops between the model's claim
// (its turn is saved) and the verifier's verdict. The run continued by
// another server verifies the claim once, and the plan records that one
// verdict.
func TestVerifierAfterRestart(t *testing.T) {
	plan := "---\nenforce: true\n---\n- [ ] Write the notes\n  - verify: notesWritten\n"
	dir := apptest.WriteApp(t, map[string]string{
		"dawn.yaml":        "runs:\n  continue_orphans: true\n",
		"release/agent.md": "You ship releases.",
		"release/plan.md":  plan,
	})
	path := filepath.Join(t.TempDir(), "dawn.db")
	f := &flags{}
	base := verifyOptions(f, t.TempDir())
	base.StorePath = path

	// The first server: the verifier starts and never answers.
	started, hang := make(chan struct{}), make(chan struct{})
	defer close(hang)
	first := withVerifier(base, func(ctx context.Context, _ harness.VerifyInput) (harness.Verdict, error) {
		close(started)
		<-hang
		return harness.Verdict{Pass: true, Detail: "never reached"}, nil
	})
	a := apptest.New(t, dir, dawntest.Script().CallTool("writeTodos", done("Write the notes", "wrote them")).Reply("never"), first)
	if _, err := a.Runs.Start(context.Background(), runner.Request{ThreadID: "r1", Route: "/release", Messages: []thread.Message{{Role: thread.RoleUser, Content: "ship"}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the verifier did not start within 10s")
	}
	cp, err := a.Store.Latest(context.Background(), "r1")
	if err != nil || len(cp.Messages) != 2 {
		t.Fatalf("the claim's turn is not saved before its call runs: %v, %+v", err, cp)
	}
	if err := a.Store.Close(); err != nil {
		t.Fatal(err)
	}

	// The second server continues the run: the claim is verified there.
	var runs atomic.Int32
	second := withVerifier(base, func(context.Context, harness.VerifyInput) (harness.Verdict, error) {
		runs.Add(1)
		return harness.Verdict{Pass: true, Detail: "notes/release.md has 3 lines"}, nil
	})
	gate := make(chan struct{}) // holds the continued run until the test has it
	b := apptest.New(t, dir, dawntest.Script().Wait(gate).Reply("Notes are written."), second)
	continued, _, err := b.Runs.ContinueOrphans(context.Background())
	if err != nil || continued != 1 {
		t.Fatalf("ContinueOrphans = %d, %v; want the run continued", continued, err)
	}
	run := b.Runs.Active("r1")
	if run == nil {
		t.Fatal("no run in flight on r1 after ContinueOrphans")
	}
	close(gate)
	<-run.Done()
	if run.Err() != nil {
		t.Fatal(run.Err())
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the verifier ran %d times after the restart, want once", n)
	}
	cp, err = b.Store.Latest(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	p, err := planning.DecodePlan(cp.Values)
	if err != nil || p == nil {
		t.Fatalf("no plan saved: %v", err)
	}
	it := p.Items[0]
	if p.State != harness.Done || it.Status != harness.Completed || it.Verification == nil || it.Verification.Output != "notes/release.md has 3 lines" || it.Attempts != 0 {
		t.Fatalf("plan %s, item %+v; want done with the second server's verdict, no failed attempt", p.State, it)
	}
	results := 0
	for _, m := range cp.Messages {
		if m.Role == thread.RoleTool && m.Name == "writeTodos" {
			results++
		}
	}
	if results != 1 {
		t.Fatalf("the thread has %d writeTodos results, want the claim answered once: %+v", results, cp.Messages)
	}
}
