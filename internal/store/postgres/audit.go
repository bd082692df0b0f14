package postgres

import (
	"context"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

func (t *tx) InsertAudit(_ context.Context, r dialect.AuditRow) error {
	t.queue(`INSERT INTO audit (at, action, thread_id, user_name, service, outcome, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.At, r.Action, r.ThreadID, r.User, r.Service, r.Outcome, r.Detail)
	return nil
}

func (t *tx) DeleteAppValue(_ context.Context, key string) error {
	t.queue(`DELETE FROM app_values WHERE key = $1`, key)
	return nil
}

// Audit reads the audit log after an id.
func (s *DB) Audit(ctx context.Context, after int64, limit int, each func(dialect.AuditRow) error) error {
	rows, err := s.pool.Query(ctx, `SELECT id, at, action, thread_id, user_name, service, outcome, detail FROM audit WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r dialect.AuditRow
		if err := rows.Scan(&r.ID, &r.At, &r.Action, &r.ThreadID, &r.User, &r.Service, &r.Outcome, &r.Detail); err != nil {
			return err
		}
		if err := each(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
