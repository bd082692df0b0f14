package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// threadSweepBatch is how many expired threads one transaction of
// SweepThreads takes at most, so that a sweep never holds the database
// long: each deleted thread takes its runs, checkpoints and history.
const threadSweepBatch = 100

// MaxTTL is the longest TTL a thread or a Store item may have: a hundred
// years.
const MaxTTL = 100 * 365 * 24 * time.Hour

// checkTTL rejects a TTL of what ("a thread", "an item") that is negative
// or longer than MaxTTL; 0 is none.
func checkTTL(ttl time.Duration, what string) error {
	if ttl < 0 || ttl > MaxTTL {
		return fmt.Errorf("ttl %v: %w: it must be positive and at most %v, or 0 for %s that does not expire", ttl, ErrInvalid, MaxTTL, what)
	}
	return nil
}

// SetThreadTTL gives a thread a TTL: it expires ttl from now, and from
// each later update (see Thread.TTL); a ttl of 0 takes the TTL away. It
// returns the thread, or ErrNotFound.
func (s *DB) SetThreadTTL(ctx context.Context, id string, ttl time.Duration) (Thread, error) {
	if err := checkTTL(ttl, "a thread"); err != nil {
		return Thread{}, fmt.Errorf("thread %q: %w", id, err)
	}
	err := s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockThread(ctx, id)
		if errors.Is(err, dialect.ErrNoRow) {
			return fmt.Errorf("thread %q: %w", id, ErrNotFound)
		}
		if err == nil {
			now := s.now()
			var expires int64
			if ttl > 0 {
				expires = now + int64(ttl)
			}
			err = tx.SetThreadTTL(ctx, l.PK, int64(ttl), expires, now)
		}
		if err != nil {
			return fmt.Errorf("store: set the ttl of thread %q: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Thread{}, err
	}
	return s.GetThread(ctx, id)
}

// SweepThreads deletes the threads whose TTL has run out since their last
// update, each with everything DeleteThread deletes, and says how many it
// deleted. It keeps an expired thread that has a run running or queued,
// or that is interrupted (waiting for a person to answer, or cut off by a
// crash): its clock starts again instead, and the thread is deleted once
// it has been left alone a whole TTL. It costs one read of an index when
// no thread has expired. Several stores on one database may sweep at
// once: each takes threads the others do not hold.
//
// In the same pass it deletes the ephemeral threads whose runs are done
// (Run.Ephemeral; see sweepEphemeral).
func (s *DB) SweepThreads(ctx context.Context) (int, error) {
	expired, err := s.sweepExpired(ctx)
	if err != nil {
		return expired, err
	}
	ended, err := s.sweepEphemeral(ctx)
	return expired + ended, err
}

// sweepExpired is SweepThreads for the threads whose TTL ran out.
func (s *DB) sweepExpired(ctx context.Context) (int, error) {
	total := 0
	for {
		at := s.now()
		expired, err := s.d.AnyExpiredThread(ctx, at)
		if err != nil || !expired {
			return total, wrapErr("store: delete expired threads", err)
		}
		var deleted, seen int
		err = s.write(ctx, func(tx dialect.Tx) error {
			var err error
			deleted, seen, err = s.sweepBatch(ctx, tx, at)
			return err
		})
		total += deleted
		if err != nil || seen < threadSweepBatch {
			return total, wrapErr("store: delete expired threads", err)
		}
	}
}

// sweepBatch is one transaction of SweepThreads: it deletes the expired
// threads it may and restarts the clock of the others; seen is how many
// expired threads it took.
func (s *DB) sweepBatch(ctx context.Context, tx dialect.ThreadTx, at int64) (deleted, seen int, err error) {
	threads, err := tx.ExpiredThreads(ctx, at, threadSweepBatch)
	if err != nil {
		return 0, 0, err
	}
	for _, t := range threads {
		if t.Pending || t.Status == StatusInterrupted || t.Status == StatusBusy {
			err = tx.RearmThread(ctx, t.PK, at)
		} else {
			err = tx.DeleteThread(ctx, t.PK)
			deleted++
		}
		if err != nil {
			return 0, 0, fmt.Errorf("thread %q: %w", t.ID, err)
		}
	}
	return deleted, len(threads), nil
}
