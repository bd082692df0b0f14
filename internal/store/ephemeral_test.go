package store

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

// parkRun ends run runID on threadID as a run parked for a person does:
// its last step saves the pending interrupts in the state.
func parkRun(t *testing.T, s Store, threadID, runID string, step int) {
	t.Helper()
	values := thread.State{capabilities.InterruptsKey: json.RawMessage(`[{"interruptId":"perm-1","type":"permission-request","kind":"tool"}]`)}
	must(t, s.SaveStep(context.Background(), Step{ThreadID: threadID, RunID: runID, Route: "/r", Step: step,
		Append: []thread.Message{{Role: thread.RoleUser, Content: "q"}}, Values: values, Finish: &Finish{Status: RunInterrupted}}))
}

// wantThreads checks that each of ids is gone (ErrNotFound) or kept.
func wantThreads(t *testing.T, s Store, gone bool, when string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		_, err := s.GetThread(context.Background(), id)
		if gone && !errors.Is(err, ErrNotFound) {
			t.Errorf("thread %s %s: %v, want ErrNotFound", id, when, err)
		}
		if !gone && err != nil {
			t.Errorf("thread %s %s: %v, want it kept", id, when, err)
		}
	}
}

// TestSweepEphemeralThreads: the sweep deletes an ephemeral thread once
// its run is done, whether it succeeded, failed, or was cut off when its
// server died (interrupted with no question pending), and keeps one with
// a run running or queued, or parked on an interrupt a person must still
// answer, until that is over; it never deletes a thread that is not
// ephemeral, and a run with Ephemeral set on an existing thread does not
// make it ephemeral.
func TestSweepEphemeralThreads(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		clock := newWallClock(s)
		eph := func(runID, threadID string) {
			t.Helper()
			_, err := beginRun(ctx, s, Run{ID: runID, ThreadID: threadID, Route: "/r", Ephemeral: true})
			must(t, err)
		}
		eph("ok", "done")
		must(t, s.FinishRun(ctx, "ok", RunSuccess, "", nil, nil))
		eph("bad", "failed")
		must(t, s.FinishRun(ctx, "bad", RunError, "model unreachable", nil, nil))
		eph("cut", "crashed")
		must(t, s.FinishRun(ctx, "cut", RunInterrupted, interruptedText, nil, nil))
		eph("asks", "parked")
		parkRun(t, s, "parked", "asks", 1)
		eph("live", "running")
		_, err := s.EnqueueRun(ctx, QueuedRun{ID: "later", ThreadID: "queued", Route: "/r", Request: json.RawMessage(`{}`),
			NotBefore: clock.t.Add(time.Hour), Ephemeral: true}, 0)
		must(t, err)
		exchange(t, s, "plain", "plain-1", "", "q", "a", `[]`)
		exchange(t, s, "existing", "existing-1", "", "q", "a", `[]`)
		eph("existing-2", "existing")
		must(t, s.FinishRun(ctx, "existing-2", RunSuccess, "", nil, nil))

		if n, err := s.SweepThreads(ctx); err != nil || n != 3 {
			t.Fatalf("sweep: %d, %v; want 3 (done, failed, crashed)", n, err)
		}
		wantThreads(t, s, true, "after the sweep", "done", "failed", "crashed")
		wantThreads(t, s, false, "after the sweep", "parked", "running", "queued", "plain", "existing")

		// The run ends and the person answers: the next sweeps take them.
		must(t, s.FinishRun(ctx, "live", RunSuccess, "", nil, nil))
		if n, err := s.SweepThreads(ctx); err != nil || n != 1 {
			t.Fatalf("sweep after the run ended: %d, %v; want 1", n, err)
		}
		clock.advance(EphemeralRecheck + time.Second)
		if n, err := s.SweepThreads(ctx); err != nil || n != 0 {
			t.Fatalf("sweep while the person has not answered: %d, %v; want 0", n, err)
		}
		_, err = beginRun(ctx, s, Run{ID: "answer", ThreadID: "parked", Route: "/r"})
		must(t, err)
		must(t, s.SaveStep(ctx, Step{ThreadID: "parked", RunID: "answer", Route: "/r", Step: 2,
			Append: []thread.Message{{Role: thread.RoleAssistant, Content: "a"}}, Values: thread.State{}, Finish: &Finish{Status: RunSuccess}}))
		clock.advance(EphemeralRecheck + time.Second)
		if n, err := s.SweepThreads(ctx); err != nil || n != 1 {
			t.Fatalf("sweep once the person answered: %d, %v; want 1", n, err)
		}
		wantThreads(t, s, true, "once its run and its person are done", "running", "parked")
		wantThreads(t, s, false, "at the end", "queued", "plain", "existing")
	})
}

// TestSweepEphemeralFair: ephemeral threads a sweep must keep (each with a
// run in flight), more than one batch of them, do not stop the sweep from
// reaching the ended ones behind them.
func TestSweepEphemeralFair(t *testing.T) {
	s := openTest(t, t.TempDir()+"/fair.db")
	ctx := context.Background()
	for i := range threadSweepBatch + 5 {
		_, err := beginRun(ctx, s, Run{ID: "live-" + strconv.Itoa(i), ThreadID: "busy-" + strconv.Itoa(i), Route: "/r", Ephemeral: true})
		must(t, err)
	}
	_, err := beginRun(ctx, s, Run{ID: "ended", ThreadID: "ended", Route: "/r", Ephemeral: true})
	must(t, err)
	must(t, s.FinishRun(ctx, "ended", RunSuccess, "", nil, nil))
	if n, err := s.SweepThreads(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v; want 1", n, err)
	}
	if _, err := s.GetThread(ctx, "ended"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ended thread behind %d busy ones: %v, want ErrNotFound", threadSweepBatch+5, err)
	}
}
