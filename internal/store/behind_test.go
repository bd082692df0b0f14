package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// TestStepBehindSharesTheNextCommit: a step written behind and the run's
// next step, saved at once, land in one transaction, in order, with all
// their messages and events.
func TestStepBehindSharesTheNextCommit(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "th", "run-1")
		db := dbOf(s)
		db.behind.window = time.Minute // no commit of its own meanwhile
		before := db.Commits()
		first := sampleStep("th", "run-1", 1, 1)
		p := s.SaveStepBehind(ctx, first)
		if err := p.Failed(); err != nil {
			t.Fatal(err)
		}
		last := sampleStep("th", "run-1", 2, 4)
		last.After = p
		last.Finish = &Finish{Status: RunSuccess, Output: json.RawMessage(`{}`)}
		must(t, s.SaveStep(ctx, last))
		if err := p.Wait(); err != nil {
			t.Fatalf("the step written behind: %v", err)
		}
		if n := db.Commits() - before; n != 1 {
			t.Errorf("%d commits for a step written behind and the next step, want 1", n)
		}
		cp, err := s.Latest(ctx, "th")
		must(t, err)
		if cp.Step != 2 || len(cp.Messages) != 4 {
			t.Errorf("latest: step %d with %d messages, want step 2 with 4", cp.Step, len(cp.Messages))
		}
		events, err := s.Events(ctx, "run-1", 0)
		must(t, err)
		if len(events) != 6 || events[0].ID != 1 || events[5].ID != 6 {
			t.Errorf("events: %v, want ids 1 to 6", eventIDs(events))
		}
	})
}

// TestStepBehindCommitsOnItsOwn: with no other write coming, a step
// written behind is committed within the store's window, without anyone
// waiting for it.
func TestStepBehindCommitsOnItsOwn(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "th", "run-1")
		s.SaveStepBehind(ctx, sampleStep("th", "run-1", 1, 1))
		deadline := time.Now().Add(5 * time.Second)
		for {
			cp, err := s.Latest(ctx, "th")
			must(t, err)
			if cp.Step == 1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the step written behind is not in the store 5s later (step %d)", cp.Step)
			}
			time.Sleep(DefaultBehindWindow / 2)
		}
	})
}

// TestStepBehindFailureStopsTheNext: a step written behind that the store
// refuses (its run ended meanwhile) fails its Pending, and the run's next
// step, which follows it, fails with that error and writes nothing.
func TestStepBehindFailureStopsTheNext(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "th", "run-1")
		newRun(t, s, "other", "run-2")
		must(t, s.FinishRun(ctx, "run-1", RunCancelled, "", json.RawMessage(`{}`), nil))
		p := s.SaveStepBehind(ctx, sampleStep("th", "run-1", 1, 1))
		// A step of another run, saved meanwhile, takes the queued one
		// into its transaction and must not fail with it.
		must(t, s.SaveStep(ctx, sampleStep("other", "run-2", 1, 1)))
		if err := p.Wait(); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("the refused step written behind: %v, want ErrNotRunning", err)
		}
		next := sampleStep("th", "run-1", 2, 4)
		next.After = p
		if err := s.SaveStep(ctx, next); !errors.Is(err, ErrNotRunning) {
			t.Errorf("the step after it: %v, want the refused step's ErrNotRunning", err)
		}
		cp, err := s.Latest(ctx, "other")
		must(t, err)
		if cp.Step != 1 {
			t.Errorf("the other run's step: thread at step %d, want 1", cp.Step)
		}
		cp, err = s.Latest(ctx, "th")
		must(t, err)
		if cp.Step != 0 {
			t.Errorf("the refused run's thread is at step %d, want 0", cp.Step)
		}
	})
}

// TestStepBehindRefusedAtOnce: a step that fails its checks gives a
// Pending that has already failed, and queues nothing.
func TestStepBehindRefusedAtOnce(t *testing.T) {
	s := openTest(t, ":memory:")
	newRun(t, s, "th", "run-1")
	st := sampleStep("th", "run-1", 1, 1)
	st.Events[1].ID = 1 // out of order
	p := s.SaveStepBehind(context.Background(), st)
	if err := p.Failed(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Failed() = %v, want ErrInvalid at once", err)
	}
	if len(s.behind.take()) != 0 {
		t.Error("a refused step was queued")
	}
}

// TestStepBehindSurvivesClose: a store closed with a step still queued
// commits it first.
func TestStepBehindSurvivesClose(t *testing.T) {
	eachDurable(t, func(t *testing.T, open func() Store) {
		ctx := context.Background()
		s := open()
		newRun(t, s, "th", "run-1")
		p := s.SaveStepBehind(ctx, sampleStep("th", "run-1", 1, 1))
		must(t, s.Close())
		if err := p.Wait(); err != nil {
			t.Fatalf("the queued step at Close: %v", err)
		}
		cp, err := open().Latest(ctx, "th")
		must(t, err)
		if cp.Step != 1 {
			t.Errorf("after Close and open: step %d, want 1", cp.Step)
		}
	})
}

// TestStepsBehindOfManyRuns: runs writing steps behind at once, each
// followed by its last step, all land whole and in order, and share
// commits.
func TestStepsBehindOfManyRuns(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		const runs, steps = 24, 4
		for i := range runs {
			newRun(t, s, fmt.Sprintf("th-%d", i), fmt.Sprintf("run-%d", i))
		}
		before := dbOf(s).Commits()
		var wg sync.WaitGroup
		errs := make(chan error, runs)
		for i := range runs {
			wg.Go(func() {
				th, run := fmt.Sprintf("th-%d", i), fmt.Sprintf("run-%d", i)
				var p *Pending
				for n := 1; n < steps; n++ {
					st := sampleStep(th, run, n, int64(3*n-2))
					st.After = p
					p = s.SaveStepBehind(ctx, st)
					time.Sleep(time.Duration(i%3) * time.Millisecond)
				}
				last := sampleStep(th, run, steps, 3*steps-2)
				last.After = p
				last.Finish = &Finish{Status: RunSuccess, Output: json.RawMessage(`{}`)}
				if err := s.SaveStep(ctx, last); err != nil {
					errs <- fmt.Errorf("%s: %w", run, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for i := range runs {
			cp, err := s.Latest(ctx, fmt.Sprintf("th-%d", i))
			must(t, err)
			if cp.Step != steps || len(cp.Messages) != 2*steps {
				t.Errorf("thread %d: step %d with %d messages, want %d with %d", i, cp.Step, len(cp.Messages), steps, 2*steps)
			}
		}
		if n := dbOf(s).Commits() - before; n >= runs*steps {
			t.Errorf("%d commits for %d steps", n, runs*steps)
		}
	})
}

func eventIDs(events []stream.Event) []int64 {
	ids := make([]int64, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return ids
}
