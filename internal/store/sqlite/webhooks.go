package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Webhook reads the webhook delivery of a run, or dialect.ErrNoRow.
func (s *DB) Webhook(ctx context.Context, runID string) (dialect.WebhookRow, error) {
	defer s.lockRead()()
	w, err := dialect.ScanWebhook(s.rq.QueryRowContext(ctx, `SELECT `+dialect.WebhookColumns+` FROM webhook_deliveries WHERE run_id = ?`, runID).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return w, dialect.ErrNoRow
	}
	return w, err
}

// anyDueWebhook finds a due delivery through the partial due index.
const anyDueWebhook = `SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND next_at <= ? LIMIT 1`

// AnyDueWebhook reports whether a pending delivery is due at at.
func (s *DB) AnyDueWebhook(ctx context.Context, at int64) (bool, error) {
	defer s.lockRead()()
	var one int
	err := s.rq.QueryRowContext(ctx, anyDueWebhook, at).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (t tx) InsertWebhook(ctx context.Context, w dialect.WebhookRow) error {
	marks := strings.TrimSuffix(strings.Repeat("?, ", 14), ", ")
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+dialect.WebhookColumns+`) VALUES (`+marks+`)
		ON CONFLICT (run_id) DO NOTHING`, dialect.WebhookValues(w)...)
	return err
}

// dueWebhooks reads the due deliveries through the partial due index.
const dueWebhooks = `SELECT ` + dialect.WebhookColumns + ` FROM webhook_deliveries
	WHERE status = 'pending' AND next_at <= ? ORDER BY next_at LIMIT ?`

// DueWebhooks reads the due deliveries; the write transaction holds the
// whole database, so no other store claims them meanwhile.
func (t tx) DueWebhooks(ctx context.Context, at int64, limit int) ([]dialect.WebhookRow, error) {
	rows, err := t.s.conn.QueryContext(ctx, dueWebhooks, at, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanWebhooks(rows)
}

func (t tx) LockWebhook(ctx context.Context, runID string) (dialect.WebhookRow, error) {
	w, err := dialect.ScanWebhook(t.s.conn.QueryRowContext(ctx, `SELECT `+dialect.WebhookColumns+` FROM webhook_deliveries WHERE run_id = ?`, runID).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return w, dialect.ErrNoRow
	}
	return w, err
}

func (t tx) ClaimWebhook(ctx context.Context, runID string, owner, next, now int64) error {
	return affected(t.s.conn.ExecContext(ctx, `UPDATE webhook_deliveries SET claimed_by = ?, next_at = ?, updated_at = ? WHERE run_id = ?`,
		owner, next, now, runID))
}

func (t tx) UpdateWebhook(ctx context.Context, w dialect.WebhookRow) error {
	return affected(t.s.conn.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, code = ?, error = ?,
		next_at = ?, claimed_by = ?, updated_at = ? WHERE run_id = ?`,
		w.Status, w.Attempts, w.Code, w.Error, w.NextAt, w.ClaimedBy, w.UpdatedAt, w.RunID))
}

func (t tx) ReleaseWebhooks(ctx context.Context, owner, at int64) (int, error) {
	res, err := t.s.conn.ExecContext(ctx, `UPDATE webhook_deliveries SET claimed_by = 0, next_at = ?, updated_at = ?
		WHERE status = 'pending' AND claimed_by = ?`, at, at, owner)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// deleteEndedWebhooks deletes ended deliveries through the partial ended
// index.
const deleteEndedWebhooks = `DELETE FROM webhook_deliveries WHERE run_id IN (SELECT run_id FROM webhook_deliveries
	WHERE status <> 'pending' AND updated_at < ? LIMIT ?)`

func (t tx) DeleteEndedWebhooks(ctx context.Context, before int64, limit int) (int, error) {
	res, err := t.s.conn.ExecContext(ctx, deleteEndedWebhooks, before, limit)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
