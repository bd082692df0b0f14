package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/store/sqlite"
)

// inOneGroup runs the calls at once and makes them share one group commit:
// it holds the writer lock until all of them are queued. It returns each
// call's error, or its panic as an error.
func inOneGroup(t *testing.T, d *sqlite.DB, calls []func() error) []error {
	t.Helper()
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	release := d.HoldWriter()
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
	for d.Queued() != len(calls) {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("%d of %d writes queued", d.Queued(), len(calls))
		}
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	return errs
}

// TestGroupCommit checks that writes sharing a commit stay apart: the ones
// that fail, midway or by panicking, leave nothing behind, and the others
// land whole.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s, d := openTest(t, filepath.Join(t.TempDir(), "dawn.db"))
	for _, id := range []string{"a", "b", "c", "d"} {
		newRun(t, s, id, "run-"+id)
	}
	must(t, s.SaveStep(ctx, sampleStep("c", "run-c", 1, 1)))
	commitsBefore := d.Commits()

	errs := inOneGroup(t, d, []func() error{
		func() error { return s.SaveStep(ctx, sampleStep("a", "run-a", 1, 1)) },
		// Fails at its events, after its messages went in.
		func() error { return s.SaveStep(ctx, sampleStep("c", "run-c", 2, 3)) },
		func() error {
			return d.WriteConn(ctx, func(ctx context.Context, conn *sql.Conn) error {
				if _, err := conn.ExecContext(ctx, `UPDATE threads SET metadata = '{"x":1}' WHERE id = 'd'`); err != nil {
					return err
				}
				panic("boom")
			})
		},
		func() error { return s.SaveStep(ctx, sampleStep("b", "run-b", 5, 1)) },
		func() error { return s.SaveStep(ctx, sampleStep("b", "run-b", 1, 1)) },
	})
	if n := d.Commits() - commitsBefore; n != 1 {
		t.Errorf("%d commits for one group, want 1", n)
	}
	wants := []func(error) bool{
		func(err error) bool { return err == nil },
		func(err error) bool { return err != nil && !errors.Is(err, store.ErrStepOrder) },
		func(err error) bool { return err != nil && err.Error() == "panic: boom" },
		func(err error) bool { return errors.Is(err, store.ErrStepOrder) },
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
