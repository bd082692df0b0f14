package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/store/sqlite"
)

// walFrames returns how many frames the WAL of d holds.
func walFrames(t *testing.T, d *sqlite.DB) int {
	t.Helper()
	frames, err := d.WALFrames()
	must(t, err)
	return frames
}

func TestCheckpointer(t *testing.T) {
	ctx := context.Background()
	s, d := openTest(t, filepath.Join(t.TempDir(), "dawn.db"))
	for i := range 3 * sqlite.CheckpointEvery {
		_, err := s.CreateThread(ctx, fmt.Sprint("t", i), nil)
		must(t, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for d.CheckpointRuns() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no background checkpoint after 3*checkpointEvery commits")
		}
		time.Sleep(time.Millisecond)
	}

	// When the WAL is too long the writer checkpoints after its next
	// commit, and the commit after that starts the WAL over. (A background
	// checkpoint running at that moment makes the writer's one give up, so
	// try again a few times.)
	threads := 3 * sqlite.CheckpointEvery
	for attempt := 1; ; attempt++ {
		d.CatchUp()
		for _, id := range []string{"catch-up", "restart"} {
			_, err := s.CreateThread(ctx, fmt.Sprint(id, attempt), nil)
			must(t, err)
			threads++
		}
		frames := walFrames(t, d)
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
