package postgres

import (
	"context"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// AnyEphemeralDue reports whether a sweep should look at an ephemeral
// thread at at, from the index of the ephemeral threads.
func (s *DB) AnyEphemeralDue(ctx context.Context, at int64) (bool, error) {
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM threads
		WHERE delete_after IS NOT NULL AND delete_after <= $1)`, at).Scan(&found)
	return found, err
}

// DueEphemeral locks the due ephemeral threads no other transaction holds
// and then, in a statement of its own (a snapshot taken after the locks),
// asks which of them have a running or a queued run, as ExpiredThreads
// does.
func (t *tx) DueEphemeral(ctx context.Context, at int64, limit int) ([]dialect.ExpiredThread, error) {
	return t.lockDue(ctx, `SELECT pk, id, status FROM threads
		WHERE delete_after IS NOT NULL AND delete_after <= $1 ORDER BY delete_after LIMIT $2 FOR UPDATE SKIP LOCKED`, at, limit)
}

func (t *tx) PostponeDelete(_ context.Context, threadPK, at int64) error {
	t.queue(`UPDATE threads SET delete_after = $1::bigint WHERE pk = $2`, at, threadPK)
	return nil
}
