package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// walFrames returns how many frames the WAL of s holds.
func walFrames(t *testing.T, s *SQLite) int {
	t.Helper()
	var busy, frames, copied int
	must(t, s.ckpt.db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied))
	return frames
}

func TestCheckpointer(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "dawn.db"))
	for i := range 3 * checkpointEvery {
		_, err := s.CreateThread(ctx, fmt.Sprint("t", i), nil)
		must(t, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.ckpt.runCount.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no background checkpoint after 3*checkpointEvery commits")
		}
		time.Sleep(time.Millisecond)
	}

	// When the WAL is too long the writer checkpoints after its next
	// commit, and the commit after that starts the WAL over. (A background
	// checkpoint running at that moment makes the writer's one give up, so
	// try again a few times.)
	threads := 3 * checkpointEvery
	for attempt := 1; ; attempt++ {
		s.ckpt.catchUp.Store(true)
		for _, id := range []string{"catch-up", "restart"} {
			_, err := s.CreateThread(ctx, fmt.Sprint(id, attempt), nil)
			must(t, err)
			threads++
		}
		frames := walFrames(t, s)
		if frames <= 4 {
			break
		}
		if attempt == 10 {
			t.Fatalf("WAL still holds %d frames after the writer caught up", frames)
		}
	}
	n, _, err := s.Stats(ctx)
	must(t, err)
	if n != threads {
		t.Errorf("%d threads, want %d", n, threads)
	}
}

func TestWriteAfterClose(t *testing.T) {
	for _, k := range kinds {
		s, err := Open(k.path(t))
		must(t, err)
		must(t, s.Close())
		must(t, s.Close())
		if _, err := s.CreateThread(context.Background(), "x", nil); err == nil {
			t.Errorf("%s: CreateThread after Close succeeded", k.name)
		}
	}
}
