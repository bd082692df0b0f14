package store

import (
	"strings"

	"context"
	"encoding/json"
	"errors"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"sync"
	"testing"
	"time"
)

// queueIDs returns the ids of runs.
func queueIDs(runs []QueuedRun) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestQueueKeepsOrder: queued runs wait behind a running run, are listed
// as pending, leave in order (a delayed one when its time comes), each
// once, are refused over the bound, and a cancelled one is gone.
func TestQueueKeepsOrder(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		req := json.RawMessage(`{"messages":[]}`)
		if _, err := beginRun(ctx, s, Run{ID: "r0", ThreadID: "th", Route: "/chat"}); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Hour)
		enqueueUpTo(t, s, req, 4, QueuedRun{ID: "late", NotBefore: later}, QueuedRun{ID: "q1"}, QueuedRun{ID: "q2"}, QueuedRun{ID: "q3"})
		if due, err := s.DueRuns(ctx, "", time.Now(), 0, 10); err != nil || len(due) != 0 {
			t.Fatalf("due while r0 runs: %v %v", queueIDs(due), err)
		}
		runs, err := s.Runs(ctx, "th")
		must(t, err)
		if len(runs) != 5 || runs[0].ID != "late" || runs[0].Status != RunPending || runs[3].ID != "q1" || runs[4].ID != "r0" {
			t.Fatalf("runs: %+v", runs)
		}
		if r, err := s.GetRun(ctx, "q2"); err != nil || r.Status != RunPending || r.ThreadID != "th" {
			t.Fatalf("get q2: %+v %v", r, err)
		}
		must(t, s.DequeueRun(ctx, "q2"))
		if err := s.DequeueRun(ctx, "q2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("cancel q2 twice: %v", err)
		}
		if r, err := s.GetRun(ctx, "q2"); err != nil || r.Status != RunCancelled {
			t.Fatalf("a cancelled queued run: %+v %v", r, err)
		}
		must(t, s.FinishRun(ctx, "r0", RunSuccess, "", nil, nil))
		startInOrder(t, s, req, "q1", "q3")
		if due, err := s.DueRuns(ctx, "th", time.Now(), 0, 10); err != nil || len(due) != 0 {
			t.Fatalf("the delayed run is due an hour early: %v %v", queueIDs(due), err)
		}
		if due, err := s.DueRuns(ctx, "th", later.Add(time.Second), 0, 10); err != nil || len(due) != 1 || due[0].ID != "late" {
			t.Fatalf("the delayed run at its time: %v %v", queueIDs(due), err)
		}
		must(t, s.FailQueued(ctx, "late", "route /chat is gone"))
		if r, err := s.GetRun(ctx, "late"); err != nil || r.Status != RunError || r.Error != "route /chat is gone" {
			t.Fatalf("failed queued run: %+v %v", r, err)
		}
	})
}

// enqueueUpTo queues runs on thread th, which bound then keeps full.
func enqueueUpTo(t *testing.T, s Store, req json.RawMessage, bound int, runs ...QueuedRun) {
	t.Helper()
	ctx := context.Background()
	for _, q := range runs {
		q.ThreadID, q.Route, q.Request = "th", "/chat", req
		if _, err := s.EnqueueRun(ctx, q, bound); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.EnqueueRun(ctx, QueuedRun{ID: "over", ThreadID: "th", Route: "/chat", Request: req}, bound); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("one more queued run with bound %d: %v, want ErrQueueFull", bound, err)
	}
}

// startInOrder starts and ends the due queued runs of thread th, which
// must come as ids, one at a time, each once.
func startInOrder(t *testing.T, s Store, req json.RawMessage, ids ...string) {
	t.Helper()
	ctx := context.Background()
	for _, want := range ids {
		due, err := s.DueRuns(ctx, "", time.Now(), 0, 10)
		if err != nil || len(due) != 1 || due[0].ID != want || string(due[0].Request) != string(req) {
			t.Fatalf("due: %v %v, want %s", queueIDs(due), err, want)
		}
		if _, err := s.BeginRunChecked(ctx, Run{ID: want, ThreadID: "th", Route: "/chat", Queued: true}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.BeginRunChecked(ctx, Run{ID: want, ThreadID: "th", Route: "/chat", Queued: true}, nil); err == nil {
			t.Fatalf("%s started twice", want)
		}
		must(t, s.FinishRun(ctx, want, RunSuccess, "", nil, nil))
	}
}

// TestQueueStartsOnce: processes racing to start the head of a queue
// start it once.
func TestQueueStartsOnce(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if _, err := s.EnqueueRun(ctx, QueuedRun{ID: "q1", ThreadID: "th", Route: "/chat", Request: json.RawMessage(`{}`)}, 0); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		started := 0
		for range 8 {
			wg.Go(func() {
				if _, err := s.BeginRunChecked(ctx, Run{ID: "q1", ThreadID: "th", Route: "/chat", Queued: true}, nil); err == nil {
					mu.Lock()
					started++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if started != 1 {
			t.Fatalf("the queued run started %d times", started)
		}
		if r, err := s.GetRun(ctx, "q1"); err != nil || r.Status != RunRunning {
			t.Fatalf("q1: %+v %v", r, err)
		}
		// Deleting the thread deletes its queue.
		must(t, s.FinishRun(ctx, "q1", RunSuccess, "", nil, nil))
		if _, err := s.EnqueueRun(ctx, QueuedRun{ID: "q2", ThreadID: "th", Route: "/chat", Request: json.RawMessage(`{}`)}, 0); err != nil {
			t.Fatal(err)
		}
		must(t, s.DeleteThread(ctx, "th"))
		if _, err := s.GetRun(ctx, "q2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a queued run of a deleted thread: %v", err)
		}
	})
}

// TestDiscardRun: a run rolled back leaves the thread as it was before
// it (messages, values, a large field kept in parts), its run and events
// gone, and the thread takes the next run.
func TestDiscardRun(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		user := func(text string) thread.Message { return thread.Message{Role: thread.RoleUser, Content: text} }
		big := json.RawMessage(`[` + strings.Repeat(`{"content":"a long item of a plan","status":"pending"},`, 200) + `{"content":"last","status":"pending"}]`)
		newRun(t, s, "th", "r1")
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "r1", Route: "/chat", Step: 1,
			Append: []thread.Message{user("one"), {Role: thread.RoleAssistant, Content: "answer one"}}, Values: thread.State{"todos": big},
			Finish: &Finish{Status: RunSuccess}}))
		base, err := s.BeginRunChecked(ctx, Run{ID: "r2", ThreadID: "th", Route: "/chat"}, nil)
		must(t, err)
		ev := stream.Event{ID: 1, Type: "chunk", Data: json.RawMessage(`"x"`)}
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "r2", Route: "/chat", Step: 2,
			Append: []thread.Message{user("two"), {Role: thread.RoleAssistant, Content: "answer two"}}, Values: thread.State{"todos": json.RawMessage(`[]`), "mood": json.RawMessage(`"x"`)},
			Events: []stream.Event{ev}}))
		must(t, s.DiscardRun(ctx, "r2", base))
		cp, err := s.Latest(ctx, "th")
		must(t, err)
		if len(cp.Messages) != 2 || cp.Messages[1].Content != "answer one" || len(cp.Values) != 1 || !jsonEqual(t, cp.Values["todos"], big) || cp.RunID != "r1" {
			t.Fatalf("after the rollback: %d messages, values %s, run %s", len(cp.Messages), cp.Values, cp.RunID)
		}
		if _, err := s.GetRun(ctx, "r2"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the rolled back run: %v, want ErrNotFound", err)
		}
		checkHistoryAfterDiscard(t, s, "th", "r2", cp)
		if evs, err := s.Events(ctx, "r2", 0); !errors.Is(err, ErrNotFound) || len(evs) != 0 {
			t.Fatalf("events of the rolled back run: %v %v", evs, err)
		}
		if err := s.DiscardRun(ctx, "r1", base); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("rolling back an ended run: %v", err)
		}
		th, err := s.GetThread(ctx, "th")
		must(t, err)
		if th.Status != StatusIdle {
			t.Fatalf("thread status %s", th.Status)
		}
		next, err := s.BeginRunChecked(ctx, Run{ID: "r3", ThreadID: "th", Route: "/chat"}, nil)
		must(t, err)
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "r3", Route: "/chat", Step: next.Step + 1, Append: []thread.Message{user("three")}, Values: next.Values}))
		cp, err = s.Latest(ctx, "th")
		must(t, err)
		if len(cp.Messages) != 3 || cp.Messages[2].Content != "three" {
			t.Fatalf("the next run's messages: %+v", cp.Messages)
		}
	})
}

// checkHistoryAfterDiscard checks that the thread's history keeps no
// checkpoint of the discarded run, that its head is the latest state, and
// that the head's parent is the checkpoint the run started from.
func checkHistoryAfterDiscard(t *testing.T, s Store, threadID, runID string, latest Checkpoint) {
	t.Helper()
	hist, err := s.History(context.Background(), threadID, HistoryQuery{})
	must(t, err)
	if len(hist) == 0 {
		t.Fatal("no history after the rollback")
	}
	for _, h := range hist {
		if h.RunID == runID {
			t.Errorf("the history keeps checkpoint %s (step %d, %s) of the rolled back run %s", h.ID, h.Step, h.Source, runID)
		}
	}
	head := hist[0]
	if head.ID != latest.ID || len(head.Messages) != len(latest.Messages) {
		t.Errorf("history head %s with %d messages, want the latest state %s with %d", head.ID, len(head.Messages), latest.ID, len(latest.Messages))
	}
	if len(hist) > 1 && head.ParentID != hist[1].ID {
		t.Errorf("history head's parent %q, want the checkpoint before it %q", head.ParentID, hist[1].ID)
	}
}

// TestAnyQueued: false on an empty queue, true while a run waits on any
// thread, false again once it has left the queue.
func TestAnyQueued(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		anyQueued := func() bool {
			t.Helper()
			queued, err := s.AnyQueued(ctx)
			must(t, err)
			return queued
		}
		if anyQueued() {
			t.Fatal("an empty queue reports a queued run")
		}
		_, err := s.EnqueueRun(ctx, QueuedRun{ID: "q1", ThreadID: "th", Route: "/chat", Request: json.RawMessage(`{}`)}, 0)
		must(t, err)
		if !anyQueued() {
			t.Fatal("a queued run is not reported")
		}
		must(t, s.DequeueRun(ctx, "q1"))
		if anyQueued() {
			t.Fatal("a cancelled queued run is still reported")
		}
	})
}

// TestEnqueueRunOwnsTheThread: a run queued for a user on a new thread
// creates it as theirs, and one queued for another user on that thread is
// refused as on a missing thread, with nothing queued. Before, the thread
// belonged to no one, so the run queued for its user could never start.
func TestEnqueueRunOwnsTheThread(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		req := json.RawMessage(`{}`)
		if _, err := s.EnqueueRun(ctx, QueuedRun{ID: "a1", ThreadID: "new", Route: "/chat", Request: req, Owner: "ann"}, 0); err != nil {
			t.Fatal(err)
		}
		th, err := s.GetThread(ctx, "new")
		if err != nil || th.Owner != "ann" {
			t.Fatalf("thread created by ann's queued run: %+v %v, want owned by ann", th, err)
		}
		if _, err := s.EnqueueRun(ctx, QueuedRun{ID: "b1", ThreadID: "new", Route: "/chat", Request: req, Owner: "bob"}, 0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob queues on ann's thread: %v, want ErrNotFound", err)
		}
		if q, err := s.QueuedRuns(ctx, "new"); err != nil || len(q) != 1 {
			t.Fatalf("queue after bob's refused run: %v %v", queueIDs(q), err)
		}
		if _, err := s.EnqueueRun(ctx, QueuedRun{ID: "a2", ThreadID: "new", Route: "/chat", Request: req, Owner: "ann"}, 0); err != nil {
			t.Fatalf("ann queues again on her thread: %v", err)
		}
	})
}

// TestDueRunsTakeOwnersInTurn: however many due runs one owner has, the
// first page holds every other owner's oldest, and paging on with skip
// reads them all, each once.
func TestDueRunsTakeOwnersInTurn(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		req := json.RawMessage(`{}`)
		enqueue := func(id, thread, owner string) {
			t.Helper()
			if _, err := s.EnqueueRun(ctx, QueuedRun{ID: id, ThreadID: thread, Route: "/chat", Request: req, Owner: owner}, 0); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			id := "ann-" + string(rune('a'+i))
			enqueue(id, "t-"+id, "ann")
		}
		enqueue("bob-1", "t-bob-1", "bob")
		enqueue("bob-2", "t-bob-2", "bob")
		enqueue("anon", "t-anon", "")
		first, err := s.DueRuns(ctx, "", time.Now(), 0, 3)
		must(t, err)
		got := strings.Join(queueIDs(first), ",")
		if got != "ann-a,bob-1,anon" {
			t.Fatalf("first page: %s, want each owner's oldest (ann-a,bob-1,anon)", got)
		}
		seen := map[string]bool{}
		for skip := 0; ; skip += 4 {
			page, err := s.DueRuns(ctx, "", time.Now(), skip, 4)
			must(t, err)
			for _, q := range page {
				if seen[q.ID] {
					t.Fatalf("%s read twice", q.ID)
				}
				seen[q.ID] = true
			}
			if len(page) < 4 {
				break
			}
		}
		if len(seen) != 23 {
			t.Fatalf("paging read %d due runs, want 23", len(seen))
		}
	})
}
