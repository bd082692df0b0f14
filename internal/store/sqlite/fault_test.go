package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/internal/store"
)

// TestFailWritesLeavesNothingBehind: while FailWrites is set, every write
// fails with its error and leaves nothing behind, alone or in a group
// commit, and reads go on; after FailWrites(nil) the same writes succeed.
func TestFailWritesLeavesNothingBehind(t *testing.T) {
	for _, path := range []string{filepath.Join(t.TempDir(), "dawn.db"), ":memory:"} {
		s, d := openTest(t, path)
		ctx := context.Background()
		newRun(t, s, "t", "r")
		full := errors.New("database or disk is full")
		d.FailWrites(full)
		if err := s.FinishRun(ctx, "r", store.RunSuccess, "", nil, nil); !errors.Is(err, full) {
			t.Fatalf("FinishRun while writes fail: %v", err)
		}
		errs := inOneGroup(t, d, []func() error{
			func() error { _, err := s.CreateThread(ctx, "u", nil); return err },
			func() error { return s.FinishRun(ctx, "r", store.RunError, "x", nil, nil) },
		})
		for i, err := range errs {
			if !errors.Is(err, full) {
				t.Fatalf("grouped write %d while writes fail: %v", i, err)
			}
		}
		th, err := s.GetThread(ctx, "t")
		if err != nil || th.Status != store.StatusBusy {
			t.Fatalf("thread while writes fail: %+v %v", th, err)
		}
		if _, err := s.GetThread(ctx, "u"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a failed write left thread u behind: %v", err)
		}
		d.FailWrites(nil)
		if err := s.FinishRun(ctx, "r", store.RunError, "the disk was full", nil, nil); err != nil {
			t.Fatal(err)
		}
		if th, _ := s.GetThread(ctx, "t"); th.Status != store.StatusError {
			t.Fatalf("thread after the store recovered: %+v", th)
		}
	}
}
