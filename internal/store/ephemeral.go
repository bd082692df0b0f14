package store

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/store/dialect"
)

// EphemeralRecheck is how long a sweep leaves an ephemeral thread that
// waits for a person (an interrupt not yet answered) before it reads the
// thread's state again. A thread with a run running or queued is looked
// at again by the next sweep, which costs no read of its state.
const EphemeralRecheck = time.Minute

// sweepEphemeral deletes the ephemeral threads (Run.Ephemeral) that no
// run and no person needs any more, each with everything DeleteThread
// deletes, and says how many it deleted. A thread with a run running or
// queued is kept, and so is one whose saved state holds interrupts a
// person must still answer; one whose run was cut off by a crash (its
// server died, so the run was marked interrupted) holds none, and is
// deleted. It costs one read of an index when no ephemeral thread is due.
// Several stores on one database may sweep at once: each takes threads
// the others do not hold.
func (s *DB) sweepEphemeral(ctx context.Context) (int, error) {
	// One time for the whole pass: a thread it keeps is due after it,
	// so that the pass takes each thread once.
	at := s.now()
	total := 0
	for {
		due, err := s.d.AnyEphemeralDue(ctx, at)
		if err != nil || !due {
			return total, wrapErr("store: delete the threads of ended runs", err)
		}
		var deleted, seen int
		err = s.write(ctx, func(tx dialect.Tx) error {
			var err error
			deleted, seen, err = s.ephemeralBatch(ctx, tx, at)
			return err
		})
		total += deleted
		if err != nil || seen < threadSweepBatch {
			return total, wrapErr("store: delete the threads of ended runs", err)
		}
	}
}

// ephemeralBatch is one transaction of sweepEphemeral: it deletes the due
// ephemeral threads it may and makes the others due later; seen is how
// many due threads it took. Each thread it keeps is due after at (the
// time of the whole pass), so that a pass takes each thread once and kept
// threads never crowd out the others.
func (s *DB) ephemeralBatch(ctx context.Context, tx dialect.Tx, at int64) (deleted, seen int, err error) {
	threads, err := tx.DueEphemeral(ctx, at, threadSweepBatch)
	if err != nil {
		return 0, 0, err
	}
	for _, t := range threads {
		next, err := s.ephemeralNext(ctx, tx, t, at)
		if err == nil && next != 0 {
			err = tx.PostponeDelete(ctx, t.PK, next)
		} else if err == nil {
			err = tx.DeleteThread(ctx, t.PK)
			deleted++
		}
		if err != nil {
			return 0, 0, fmt.Errorf("thread %q: %w", t.ID, err)
		}
	}
	return deleted, len(threads), nil
}

// ephemeralNext says when a sweep should look at ephemeral thread t again,
// locked at at, or 0 when t may be deleted now.
func (s *DB) ephemeralNext(ctx context.Context, tx dialect.Tx, t dialect.ExpiredThread, at int64) (int64, error) {
	if t.Pending || t.Status == StatusBusy {
		return at + 1, nil
	}
	if t.Status != StatusInterrupted {
		return 0, nil
	}
	cp, err := latest(ctx, tx, t.ID)
	if err != nil {
		return 0, err
	}
	if waitsForPerson(cp) {
		return at + int64(EphemeralRecheck), nil
	}
	return 0, nil
}

// waitsForPerson reports whether cp holds interrupts not yet answered.
func waitsForPerson(cp Checkpoint) bool {
	v := bytes.TrimSpace(cp.Values[capabilities.InterruptsKey])
	return len(v) > 0 && !bytes.Equal(v, []byte("null")) && !bytes.Equal(v, []byte("[]"))
}
