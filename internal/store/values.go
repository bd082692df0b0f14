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
func (s *SQLite) SaveValues(ctx context.Context, threadID string, step int, values thread.State) error {
	whole, parted, err := splitValues(values)
	if err != nil {
		return fmt.Errorf("thread %q: %w: %v", threadID, ErrInvalid, err)
	}
	enc := getEncoder()
	defer putEncoder(enc)
	_, state, err := enc.encodeStep(nil, whole)
	if err != nil {
		return fmt.Errorf("thread %q: %w: %v", threadID, ErrInvalid, err)
	}
	return s.write(ctx, func(ctx context.Context) error {
		var pk, prev int64
		var running bool
		var meta string
		err := s.conn.QueryRowContext(ctx, `SELECT pk, step, EXISTS(SELECT 1 FROM runs WHERE thread = t.pk AND status = 'running'), parts
			FROM threads t WHERE t.id = ?`, threadID).Scan(&pk, &prev, &running, &meta)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("thread %q: %w", threadID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		case int64(step) != prev+1:
			return fmt.Errorf("thread %q: %w: got step %d, the last saved step is %d", threadID, ErrStepOrder, step, prev)
		case running:
			return fmt.Errorf("thread %q: %w", threadID, ErrBusy)
		}
		if meta, err = s.saveParts(ctx, pk, meta, parted); err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		now := s.now()
		_, err = s.conn.ExecContext(ctx, `UPDATE threads SET step = ?, state = ?, parts = ?, checkpoint_at = ?, updated_at = ? WHERE pk = ?`, step, state, meta, now, now, pk)
		if err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		return nil
	})
}
