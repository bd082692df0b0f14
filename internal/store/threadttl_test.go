package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/thread"
)

// wallClock is the clock of a store's timestamps, and so of thread
// expiry, moved by hand.
type wallClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *wallClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *wallClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newWallClock makes the clock of every store in stores one that starts
// now and moves only by hand.
func newWallClock(stores ...Store) *wallClock {
	c := &wallClock{t: time.Now()}
	f := c.now
	for _, s := range stores {
		dbOf(s).wallTime.Store(&f)
	}
	return c
}

// expiresAt returns when thread id expires, zero for never.
func expiresAt(t *testing.T, s Store, id string) time.Time {
	t.Helper()
	th, err := s.GetThread(context.Background(), id)
	must(t, err)
	return th.ExpiresAt
}

// wantExpiry checks that thread id expires at want, to the microsecond
// (the store's clock adds a nanosecond per timestamp).
func wantExpiry(t *testing.T, s Store, id string, want time.Time, after string) {
	t.Helper()
	if got := expiresAt(t, s, id); got.Sub(want).Abs() > time.Microsecond {
		t.Errorf("after %s, thread %s expires at %v, want %v", after, id, got, want)
	}
}

// TestThreadTTL: a thread created with a TTL reports it and its expiry;
// one without has neither; the sweep deletes the first once it has been
// left alone for its TTL, with its runs and checkpoints, and never the
// second.
func TestThreadTTL(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		clock := newWallClock(s)
		th, err := s.CreateOwnedThreadTTL(ctx, "ann", "brief", json.RawMessage(`{"k":"v"}`), 10*time.Minute)
		must(t, err)
		if th.TTL != 10*time.Minute || th.ExpiresAt.Sub(clock.t.Add(10*time.Minute)).Abs() > time.Microsecond {
			t.Errorf("created thread: TTL %v, expires %v; want 10m, %v", th.TTL, th.ExpiresAt, clock.t.Add(10*time.Minute))
		}
		got, err := s.GetThread(ctx, "brief")
		must(t, err)
		if got.TTL != 10*time.Minute || !got.ExpiresAt.Equal(th.ExpiresAt) || got.Owner != "ann" {
			t.Errorf("GetThread: TTL %v, expires %v, owner %q; want what create returned", got.TTL, got.ExpiresAt, got.Owner)
		}
		exchange(t, s, "brief", "run-1", "", "q", "a", `[]`)
		_, err = s.CreateThread(ctx, "kept", nil)
		must(t, err)
		if k := expiresAt(t, s, "kept"); !k.IsZero() {
			t.Errorf("a thread without a TTL expires at %v", k)
		}
		found, err := s.SearchThreads(ctx, ThreadQuery{IDs: []string{"brief"}})
		must(t, err)
		if len(found) != 1 || found[0].TTL != 10*time.Minute {
			t.Errorf("search found %+v, want the thread with its TTL", found)
		}

		clock.advance(10*time.Minute - time.Second)
		if n, err := s.SweepThreads(ctx); err != nil || n != 0 {
			t.Fatalf("sweep before expiry: %d, %v; want 0", n, err)
		}
		clock.advance(time.Second + time.Millisecond) // the run's timestamps came a few nanoseconds later
		if n, err := s.SweepThreads(ctx); err != nil || n != 1 {
			t.Fatalf("sweep at expiry: %d, %v; want 1", n, err)
		}
		if _, err := s.GetThread(ctx, "brief"); !errors.Is(err, ErrNotFound) {
			t.Errorf("swept thread: %v, want ErrNotFound", err)
		}
		if _, err := s.GetRun(ctx, "run-1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("run of a swept thread: %v, want ErrNotFound", err)
		}
		if n := queryInt(t, s, `SELECT count(*) FROM checkpoints`); n != 0 {
			t.Errorf("%d checkpoints left after the sweep, want 0", n)
		}
		clock.advance(100 * 365 * 24 * time.Hour)
		if n, err := s.SweepThreads(ctx); err != nil || n != 0 {
			t.Errorf("sweep a century on: %d, %v; want 0 (no thread with a TTL left)", n, err)
		}
		if _, err := s.GetThread(ctx, "kept"); err != nil {
			t.Errorf("the sweep took a thread without a TTL: %v", err)
		}
	})
}

// TestThreadTTLRefresh: a run's start, steps and end, a state update, a
// change of metadata and a new TTL each move a thread's expiry to that
// time plus its TTL; a thread without a TTL gains none from them.
func TestThreadTTLRefresh(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		clock := newWallClock(s)
		const ttl = 10 * time.Minute
		_, err := s.CreateOwnedThreadTTL(ctx, "", "th", nil, ttl)
		must(t, err)
		_, err = s.CreateThread(ctx, "plain", nil)
		must(t, err)

		clock.advance(6 * time.Minute)
		cp, err := beginRun(ctx, s, Run{ID: "run-1", ThreadID: "th", Route: "/r"})
		must(t, err)
		wantExpiry(t, s, "th", clock.t.Add(ttl), "a run's start")
		clock.advance(6 * time.Minute)
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "run-1", Route: "/r", Step: cp.Step + 1,
			Append: []thread.Message{{Role: thread.RoleUser, Content: "q"}}, Values: thread.State{}}))
		wantExpiry(t, s, "th", clock.t.Add(ttl), "a step")
		clock.advance(6 * time.Minute)
		must(t, s.FinishRun(ctx, "run-1", RunSuccess, "", nil, nil))
		wantExpiry(t, s, "th", clock.t.Add(ttl), "a run's end")

		clock.advance(6 * time.Minute)
		exchange(t, s, "th", "run-2", "", "q2", "a2", `[]`)
		wantExpiry(t, s, "th", clock.t.Add(ttl), "a run ended by its last step")

		clock.advance(6 * time.Minute)
		_, err = s.UpdateState(ctx, StateUpdate{ThreadID: "th", Merge: func(cp Checkpoint) ([]thread.Message, thread.State, error) {
			return nil, thread.State{"todos": json.RawMessage(`[]`)}, nil
		}})
		must(t, err)
		wantExpiry(t, s, "th", clock.t.Add(ttl), "a state update")

		clock.advance(6 * time.Minute)
		_, err = s.PatchThreadMetadata(ctx, "th", json.RawMessage(`{}`))
		must(t, err)
		wantExpiry(t, s, "th", clock.t.Add(ttl), "a metadata update")

		clock.advance(6 * time.Minute)
		th, err := s.SetThreadTTL(ctx, "th", time.Hour)
		must(t, err)
		if th.TTL != time.Hour {
			t.Errorf("after SetThreadTTL, TTL %v, want 1h", th.TTL)
		}
		wantExpiry(t, s, "th", clock.t.Add(time.Hour), "a new TTL")
		clock.advance(59 * time.Minute)
		if n, err := s.SweepThreads(ctx); err != nil || n != 0 {
			t.Fatalf("sweep within the new TTL: %d, %v; want 0", n, err)
		}

		exchange(t, s, "plain", "run-3", "", "q", "a", `[]`)
		_, err = s.PatchThreadMetadata(ctx, "plain", json.RawMessage(`{"a":1}`))
		must(t, err)
		if e := expiresAt(t, s, "plain"); !e.IsZero() {
			t.Errorf("a thread without a TTL expires at %v after a run and an update", e)
		}
		th, err = s.SetThreadTTL(ctx, "th", 0)
		must(t, err)
		if th.TTL != 0 || !th.ExpiresAt.IsZero() {
			t.Errorf("SetThreadTTL 0: TTL %v, expires %v; want none", th.TTL, th.ExpiresAt)
		}
		if _, err := s.SetThreadTTL(ctx, "missing", time.Minute); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetThreadTTL of a missing thread: %v, want ErrNotFound", err)
		}
	})
}

// TestSweepThreadsKeepsBusy: an expired thread with a run in flight, a
// queued run, or interrupted (waiting for a person) is kept, its clock
// started again; once the run is over the thread goes a TTL later.
func TestSweepThreadsKeepsBusy(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		clock := newWallClock(s)
		for _, id := range []string{"running", "queued", "parked", "idle"} {
			_, err := s.CreateOwnedThreadTTL(ctx, "", id, nil, time.Minute)
			must(t, err)
		}
		_, err := beginRun(ctx, s, Run{ID: "in-flight", ThreadID: "running", Route: "/r"})
		must(t, err)
		_, err = beginRun(ctx, s, Run{ID: "first", ThreadID: "queued", Route: "/r"})
		must(t, err)
		_, err = s.EnqueueRun(ctx, QueuedRun{ID: "next", ThreadID: "queued", Route: "/r", Request: json.RawMessage(`{}`)}, 0)
		must(t, err)
		must(t, s.FinishRun(ctx, "first", RunSuccess, "", nil, nil))
		_, err = beginRun(ctx, s, Run{ID: "asks", ThreadID: "parked", Route: "/r"})
		must(t, err)
		must(t, s.FinishRun(ctx, "asks", RunInterrupted, "", nil, nil))

		clock.advance(2 * time.Minute)
		if n, err := s.SweepThreads(ctx); err != nil || n != 1 {
			t.Fatalf("sweep: %d, %v; want 1 (the idle thread)", n, err)
		}
		for _, id := range []string{"running", "queued", "parked"} {
			wantExpiry(t, s, id, clock.t.Add(time.Minute), "a sweep that kept it")
		}
		if n, err := s.SweepThreads(ctx); err != nil || n != 0 {
			t.Errorf("second sweep: %d, %v; want 0", n, err)
		}
		if _, err := s.GetThread(ctx, "idle"); !errors.Is(err, ErrNotFound) {
			t.Errorf("expired idle thread: %v, want ErrNotFound", err)
		}

		must(t, s.FinishRun(ctx, "in-flight", RunSuccess, "", nil, nil))
		clock.advance(2 * time.Minute)
		if n, err := s.SweepThreads(ctx); err != nil || n != 1 {
			t.Fatalf("sweep once the run is over: %d, %v; want 1", n, err)
		}
		for _, id := range []string{"queued", "parked"} {
			if _, err := s.GetThread(ctx, id); err != nil {
				t.Errorf("thread %s: %v, want it kept", id, err)
			}
		}
	})
}

// TestThreadTTLRefused: a TTL that is negative or too long is refused,
// naming the ttl.
func TestThreadTTLRefused(t *testing.T) {
	s := openTest(t, ":memory:")
	ctx := context.Background()
	_, err := s.CreateThread(ctx, "th", nil)
	must(t, err)
	for _, ttl := range []time.Duration{-time.Minute, MaxTTL + time.Minute} {
		if _, err := s.CreateOwnedThreadTTL(ctx, "", "new", nil, ttl); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "ttl") {
			t.Errorf("CreateOwnedThreadTTL with ttl %v: %v, want ErrInvalid naming ttl", ttl, err)
		}
		if _, err := s.SetThreadTTL(ctx, "th", ttl); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "ttl") {
			t.Errorf("SetThreadTTL with ttl %v: %v, want ErrInvalid naming ttl", ttl, err)
		}
	}
}

// TestSweepThreadsReplicas: stores sharing one Postgres database sweep at
// once without errors, and between them delete every expired thread once,
// across several batches; the sweep reads a partial index.
func TestSweepThreadsReplicas(t *testing.T) {
	dsn := pgtest.Database(t)
	a, b := openPostgresTest(t, dsn, Options{}), openPostgresTest(t, dsn, Options{})
	ctx := context.Background()
	clock := newWallClock(a, b)
	const expired = 2*threadSweepBatch + 7
	for i := range expired {
		_, err := a.CreateOwnedThreadTTL(ctx, "", fmt.Sprint(i), nil, time.Minute)
		must(t, err)
	}
	_, err := a.CreateOwnedThreadTTL(ctx, "", "later", nil, time.Hour)
	must(t, err)
	clock.advance(2 * time.Minute)

	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	for i, s := range []Store{a, b} {
		wg.Go(func() { counts[i], errs[i] = s.SweepThreads(ctx) })
	}
	wg.Wait()
	must(t, errors.Join(errs...))
	t.Logf("the replicas deleted %v", counts)
	if counts[0]+counts[1] != expired {
		t.Errorf("the replicas deleted %v threads, %d in all; want %d", counts, counts[0]+counts[1], expired)
	}
	if rows := queryInt(t, a, `SELECT count(*) FROM threads`); rows != 1 {
		t.Errorf("%d threads left, want 1 (the one that has not expired)", rows)
	}
	if def := queryString(t, a, `SELECT indexdef FROM pg_indexes WHERE indexname = 'threads_expiry'`); !strings.Contains(def, "(expires_at) WHERE (expires_at IS NOT NULL)") {
		t.Errorf("threads_expiry is %q, want a partial index of expires_at", def)
	}
}
