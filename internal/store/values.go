package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/thread"
)

// SaveValues replaces a thread's state values outside any run, as one new
// checkpoint step (for a supervisor acting on a thread's plan while nothing
// runs). step must be the thread's previous step + 1. It fails with
// ErrNotFound for an unknown thread, ErrBusy while a run is in flight and
// ErrStepOrder when another writer got there first.
func (s *DB) SaveValues(ctx context.Context, threadID string, step int, values thread.State) error {
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
	return s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockThread(ctx, threadID)
		switch {
		case errors.Is(err, dialect.ErrNoRow):
			return fmt.Errorf("thread %q: %w", threadID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		case int64(step) != l.Step+1:
			return fmt.Errorf("thread %q: %w: got step %d, the last saved step is %d", threadID, ErrStepOrder, step, l.Step)
		case l.Running:
			return fmt.Errorf("thread %q: %w", threadID, ErrBusy)
		}
		meta, err := planParts(ctx, tx, l.PK, l.Parts, parted)
		if err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		err = tx.SaveCheckpoint(ctx, dialect.CheckpointWrite{ThreadPK: l.PK, Step: int64(step), Parent: l.Head, Branch: l.Branch,
			Messages: l.Messages, Source: SourceUpdate, State: state, Parts: meta, Now: s.now(), ValuesOnly: true})
		if err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		return nil
	})
}
