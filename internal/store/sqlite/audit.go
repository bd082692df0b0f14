package sqlite

import (
	"context"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

func (t tx) InsertAudit(ctx context.Context, r dialect.AuditRow) error {
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO audit (at, action, thread_id, user_name, service, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.At, r.Action, r.ThreadID, r.User, r.Service, r.Outcome, r.Detail)
	return err
}

func (t tx) DeleteAppValue(ctx context.Context, key string) error {
	_, err := t.s.conn.ExecContext(ctx, `DELETE FROM app_values WHERE key = ?`, key)
	return err
}

// Audit reads the audit log after an id.
func (s *DB) Audit(ctx context.Context, after int64, limit int, each func(dialect.AuditRow) error) error {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT id, at, action, thread_id, user_name, service, outcome, detail FROM audit WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
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
