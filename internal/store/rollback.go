package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// DiscardRun rolls back a running run (multitask_strategy "rollback"):
// the run, its events and every message it added are deleted, and the
// thread's state becomes base, the checkpoint the run started from, as
// a new step; the thread is idle. It fails with ErrNotFound for an
// unknown run, ErrNotRunning for one that has ended, and ErrInvalid when
// base is not a checkpoint of the run's thread before it.
func (s *DB) DiscardRun(ctx context.Context, runID string, base Checkpoint) error {
	whole, parted, err := splitValues(base.Values)
	if err != nil {
		return fmt.Errorf("run %q: %w: %v", runID, ErrInvalid, err)
	}
	enc := getEncoder()
	defer putEncoder(enc)
	_, state, err := enc.encodeStep(nil, whole)
	if err != nil {
		return fmt.Errorf("run %q: %w: %v", runID, ErrInvalid, err)
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockRun(ctx, runID)
		switch {
		case errors.Is(err, dialect.ErrNoRow):
			return fmt.Errorf("run %q: %w", runID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: roll back run %q: %w", runID, err)
		case l.Status != RunRunning:
			return fmt.Errorf("run %q is %s: %w", runID, l.Status, ErrNotRunning)
		case l.ThreadID != base.ThreadID || int64(len(base.Messages)) > l.Messages:
			return fmt.Errorf("run %q: %w: the checkpoint to roll back to is not one of its thread before it", runID, ErrInvalid)
		}
		// The run's messages are on the branch it ran on; its kept
		// checkpoints go with it, so the history shows no step of it.
		if err := tx.DiscardRun(ctx, l.ThreadPK, l.PK, l.Branch, int64(len(base.Messages)), runID); err != nil {
			return fmt.Errorf("store: roll back run %q: %w", runID, err)
		}
		meta, err := planParts(ctx, tx, l.ThreadPK, l.Parts, parted)
		if err != nil {
			return fmt.Errorf("store: roll back run %q: %w", runID, err)
		}
		// The thread's state is the run's starting state again, kept as
		// a checkpoint after the one it started from.
		err = tx.SaveCheckpoint(ctx, dialect.CheckpointWrite{ThreadPK: l.ThreadPK, Step: l.Step + 1, Parent: int64(base.Head), Branch: l.Branch,
			Messages: int64(len(base.Messages)), RunID: base.RunID, Route: base.Route, Source: SourceUpdate, State: state, Parts: meta, Status: StatusIdle, Now: s.now()})
		if err != nil {
			return fmt.Errorf("store: roll back run %q: %w", runID, err)
		}
		return tx.RunChanged(ctx, runID)
	})
}
