package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestGetRunWhileQueuedRunStarts: a queued run read while it leaves the
// queue to start (through another store on the same database, as another
// replica starts it) is found, pending or running, never ErrNotFound:
// GetRun reads the runs, then the queue, and a run that moved from one
// to the other between the two reads was in neither; the thread's runs
// list it once, not as both.
func TestGetRunWhileQueuedRunStarts(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.CreateThread(ctx, "q", nil)
		must(t, err)
		for i := range 150 {
			id := fmt.Sprintf("queued-%d", i)
			if _, err := s.EnqueueRun(ctx, QueuedRun{ID: id, ThreadID: "q", Route: "/support/[tenant]", Request: []byte(`{}`)}, 10); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.BeginRunChecked(ctx, Run{ID: id, ThreadID: "q", Route: "/support/[tenant]", Queued: true}, nil); err != nil {
					t.Errorf("start %s: %v", id, err)
				}
			}()
			for {
				r, err := s.GetRun(ctx, id)
				if errors.Is(err, ErrNotFound) {
					wg.Wait()
					t.Fatalf("run %s was in neither the runs nor the queue while it started (round %d)", id, i)
				}
				must(t, err)
				list, err := s.Runs(ctx, "q")
				must(t, err)
				if n := countRun(list, id); n != 1 {
					wg.Wait()
					t.Fatalf("the thread's runs list %s %d times while it started (round %d)", id, n, i)
				}
				if r.Status == RunRunning {
					break
				}
			}
			wg.Wait()
			must(t, s.FinishRun(ctx, id, RunSuccess, "", nil, nil))
		}
	})
}

func countRun(list []Run, id string) int {
	n := 0
	for _, r := range list {
		if r.ID == id {
			n++
		}
	}
	return n
}
