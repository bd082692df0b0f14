package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/dawn-go/dawn/thread"
)

// SaveValues replaces a thread's state values outside any run, as one new
// checkpoint step (for a supervisor acting on a thread's plan while nothing
// runs). step must be the thread's previous step + 1. It fails with
// ErrNotFound for an unknown thread, ErrBusy while a run is in flight and
// ErrStepOrder when another writer got there first.
func (s *Store) SaveValues(ctx context.Context, threadID string, step int, values thread.State) error {
	enc := getEncoder()
	defer putEncoder(enc)
	_, state, err := enc.encodeStep(nil, values)
	if err != nil {
		return fmt.Errorf("thread %q: %w: %v", threadID, ErrInvalid, err)
	}
	return s.write(ctx, func(ctx context.Context) error {
		var prev int64
		err := s.conn.QueryRowContext(ctx, `SELECT step FROM threads WHERE id = ?`, threadID).Scan(&prev)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("thread %q: %w", threadID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		case int64(step) != prev+1:
			return fmt.Errorf("thread %q: %w: got step %d, the last saved step is %d", threadID, ErrStepOrder, step, prev)
		}
		var running int
		if err := s.conn.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE thread_id = ? AND status = 'running'`, threadID).Scan(&running); err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		if running > 0 {
			return fmt.Errorf("thread %q: %w", threadID, ErrBusy)
		}
		now := s.now()
		_, err = s.conn.ExecContext(ctx, `UPDATE threads SET step = ?, state = ?, checkpoint_at = ?, updated_at = ? WHERE id = ?`, step, state, now, now, threadID)
		if err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		return nil
	})
}
