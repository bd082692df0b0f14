package sqlite

import (
	"context"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// The ephemeral sweep's statements read the index of the ephemeral
// threads (threads_delete_after), so that they cost next to nothing when
// there are none. A thread is pending while it has a running run or a
// queued one.
const (
	anyEphemeralDue = `SELECT 1 FROM threads WHERE delete_after IS NOT NULL AND delete_after <= ? LIMIT 1`
	dueEphemeral    = `SELECT t.pk, t.id, t.status,
		EXISTS(SELECT 1 FROM runs WHERE thread = t.pk AND status = 'running') OR EXISTS(SELECT 1 FROM queued_runs WHERE thread = t.pk)
		FROM threads t WHERE t.delete_after IS NOT NULL AND t.delete_after <= ? ORDER BY t.delete_after LIMIT ?`
)

// AnyEphemeralDue reports whether a sweep should look at an ephemeral
// thread at at, from the index of the ephemeral threads.
func (s *DB) AnyEphemeralDue(ctx context.Context, at int64) (bool, error) {
	return s.anyDue(ctx, anyEphemeralDue, at)
}

// DueEphemeral needs no lock of its own: the write transaction holds the
// only writer connection.
func (t tx) DueEphemeral(ctx context.Context, at int64, limit int) ([]dialect.ExpiredThread, error) {
	return t.sweepThreads(ctx, dueEphemeral, at, limit)
}

func (t tx) PostponeDelete(ctx context.Context, threadPK, at int64) error {
	_, err := t.s.conn.ExecContext(ctx, `UPDATE threads SET delete_after = ? WHERE pk = ?`, at, threadPK)
	return err
}
