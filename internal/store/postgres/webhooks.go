package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
)

// Webhook reads the webhook delivery of a run, or dialect.ErrNoRow.
func (s *DB) Webhook(ctx context.Context, runID string) (dialect.WebhookRow, error) {
	w, err := dialect.ScanWebhook(s.pool.QueryRow(ctx, `SELECT `+dialect.WebhookColumns+` FROM webhook_deliveries WHERE run_id = $1`, runID).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, dialect.ErrNoRow
	}
	return w, err
}

// AnyDueWebhook reports whether a pending delivery is due at at, through
// the partial due index.
func (s *DB) AnyDueWebhook(ctx context.Context, at int64) (bool, error) {
	var due bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND next_at <= $1)`, at).Scan(&due)
	return due, err
}

// insertWebhook is InsertWebhook's statement.
var insertWebhook = func() string {
	marks := make([]string, 14)
	for i := range marks {
		marks[i] = "$" + strconv.Itoa(i+1)
	}
	return `INSERT INTO webhook_deliveries (` + dialect.WebhookColumns + `) VALUES (` + strings.Join(marks, ", ") + `)
		ON CONFLICT (run_id) DO NOTHING`
}()

// InsertWebhook is queued with the transaction's other writes: a run's
// end and its delivery go to the database in one round trip.
func (t *tx) InsertWebhook(_ context.Context, w dialect.WebhookRow) error {
	t.queue(insertWebhook, dialect.WebhookValues(w)...)
	return nil
}

// DueWebhooks locks the due deliveries, skipping those another
// transaction (a replica claiming at the same time) has locked: each goes
// to one claimer.
func (t *tx) DueWebhooks(ctx context.Context, at int64, limit int) ([]dialect.WebhookRow, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(ctx, `SELECT `+dialect.WebhookColumns+` FROM webhook_deliveries
		WHERE status = 'pending' AND next_at <= $1 ORDER BY next_at LIMIT $2 FOR UPDATE SKIP LOCKED`, at, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanWebhooks(rows)
}

func (t *tx) LockWebhook(ctx context.Context, runID string) (dialect.WebhookRow, error) {
	var w dialect.WebhookRow
	err := t.queryRow(ctx, `SELECT `+dialect.WebhookColumns+` FROM webhook_deliveries WHERE run_id = $1 FOR UPDATE`, []any{runID},
		&w.RunID, &w.ThreadPK, &w.ThreadID, &w.URL, &w.Payload, &w.Status, &w.Attempts, &w.MaxAttempts, &w.Code, &w.Error,
		&w.NextAt, &w.ClaimedBy, &w.CreatedAt, &w.UpdatedAt)
	return w, err
}

func (t *tx) ClaimWebhook(ctx context.Context, runID string, owner, next, now int64) error {
	tag, err := t.exec(ctx, `UPDATE webhook_deliveries SET claimed_by = $1, next_at = $2, updated_at = $3 WHERE run_id = $4`, owner, next, now, runID)
	if err == nil && tag.RowsAffected() == 0 {
		return dialect.ErrNoRow
	}
	return err
}

func (t *tx) UpdateWebhook(ctx context.Context, w dialect.WebhookRow) error {
	tag, err := t.exec(ctx, `UPDATE webhook_deliveries SET status = $1, attempts = $2, code = $3, error = $4,
		next_at = $5, claimed_by = $6, updated_at = $7 WHERE run_id = $8`,
		w.Status, w.Attempts, w.Code, w.Error, w.NextAt, w.ClaimedBy, w.UpdatedAt, w.RunID)
	if err == nil && tag.RowsAffected() == 0 {
		return dialect.ErrNoRow
	}
	return err
}

func (t *tx) ReleaseWebhooks(ctx context.Context, owner, at int64) (int, error) {
	tag, err := t.exec(ctx, `UPDATE webhook_deliveries SET claimed_by = 0, next_at = $1, updated_at = $1
		WHERE status = 'pending' AND claimed_by = $2`, at, owner)
	return int(tag.RowsAffected()), err
}

// DeleteEndedWebhooks deletes ended deliveries through the partial ended
// index, skipping rows a replica sweeping at once has locked.
func (t *tx) DeleteEndedWebhooks(ctx context.Context, before int64, limit int) (int, error) {
	tag, err := t.exec(ctx, `DELETE FROM webhook_deliveries WHERE run_id IN (SELECT run_id FROM webhook_deliveries
		WHERE status <> 'pending' AND updated_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, before, limit)
	return int(tag.RowsAffected()), err
}
