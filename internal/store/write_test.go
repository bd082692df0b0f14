package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// inOneGroup runs the calls at once and makes them share one group commit:
// it holds the writer lock until all of them are queued. It returns each
// call's error, or its panic as an error.
func inOneGroup(t *testing.T, s *SQLite, calls []func() error) []error {
	t.Helper()
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	s.mu.Lock()
	for i, call := range calls {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panic: %v", p)
				}
			}()
			errs[i] = call()
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.queueMu.Lock()
		queued := len(s.queue)
		s.queueMu.Unlock()
		if queued == len(calls) {
			break
		}
		if time.Now().After(deadline) {
			s.mu.Unlock()
			t.Fatalf("%d of %d writes queued", queued, len(calls))
		}
		time.Sleep(time.Millisecond)
	}
	s.mu.Unlock()
	wg.Wait()
	return errs
}

// TestGroupCommit checks that writes sharing a commit stay apart: the ones
// that fail, midway or by panicking, leave nothing behind, and the others
// land whole.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "dawn.db"))
	for _, id := range []string{"a", "b", "c", "d"} {
		newRun(t, s, id, "run-"+id)
	}
	must(t, s.SaveStep(ctx, sampleStep("c", "run-c", 1, 1)))
	commitsBefore := s.ckpt.commits

	errs := inOneGroup(t, s, []func() error{
		func() error { return s.SaveStep(ctx, sampleStep("a", "run-a", 1, 1)) },
		// Fails at its events, after its messages went in.
		func() error { return s.SaveStep(ctx, sampleStep("c", "run-c", 2, 3)) },
		func() error {
			return s.write(ctx, func(ctx context.Context) error {
				if _, err := s.conn.ExecContext(ctx, `UPDATE threads SET metadata = '{"x":1}' WHERE id = 'd'`); err != nil {
					return err
				}
				panic("boom")
			})
		},
		func() error { return s.SaveStep(ctx, sampleStep("b", "run-b", 5, 1)) },
		func() error { return s.SaveStep(ctx, sampleStep("b", "run-b", 1, 1)) },
	})
	if s.ckpt.commits != commitsBefore+1 {
		t.Errorf("%d commits for one group, want 1", s.ckpt.commits-commitsBefore)
	}
	wants := []func(error) bool{
		func(err error) bool { return err == nil },
		func(err error) bool { return err != nil && !errors.Is(err, ErrStepOrder) },
		func(err error) bool { return err != nil && err.Error() == "panic: boom" },
		func(err error) bool { return errors.Is(err, ErrStepOrder) },
		func(err error) bool { return err == nil },
	}
	for i, want := range wants {
		if !want(errs[i]) {
			t.Errorf("write %d: %v", i, errs[i])
		}
	}
	for _, tt := range []struct {
		thread   string
		step     int
		messages int
	}{
		{"a", 1, 2},
		{"b", 1, 2},
		{"c", 1, 2}, // the failed step 2 left no message behind
	} {
		cp, err := s.Latest(ctx, tt.thread)
		must(t, err)
		if cp.Step != tt.step || len(cp.Messages) != tt.messages {
			t.Errorf("thread %s: step %d with %d messages, want %d and %d", tt.thread, cp.Step, len(cp.Messages), tt.step, tt.messages)
		}
	}
	th, err := s.GetThread(ctx, "d")
	must(t, err)
	if string(th.Metadata) != "{}" {
		t.Errorf("the panicking write left metadata %s", th.Metadata)
	}
	// The store goes on after the group.
	must(t, s.SaveStep(ctx, sampleStep("c", "run-c", 2, 4)))
}
