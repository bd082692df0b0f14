package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Crons reads the crons f selects.
func (s *DB) Crons(ctx context.Context, f dialect.CronFilter) ([]dialect.CronRow, error) {
	a := &dialect.Args{}
	query := dialect.CronQuery(a, f)
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, a.List...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []dialect.CronRow
	for rows.Next() {
		c, err := dialect.ScanCron(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// CountCrons counts the crons f selects.
func (s *DB) CountCrons(ctx context.Context, f dialect.CronFilter) (int, error) {
	a := &dialect.Args{}
	where := dialect.CronWhere(a, f)
	defer s.lockRead()()
	var n int
	err := s.rq.QueryRowContext(ctx, `SELECT count(*) FROM crons`+where, a.List...).Scan(&n)
	return n, err
}

func (t tx) InsertCron(ctx context.Context, c dialect.CronRow) error {
	res, err := t.s.conn.ExecContext(ctx, `INSERT INTO crons (`+dialect.CronColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		c.ID, c.AssistantID, c.ThreadID, c.Schedule, c.Timezone, c.Payload, c.Metadata, c.OnRunCompleted,
		c.NextRunAt, c.EndTime, c.CreatedAt, c.UpdatedAt, c.Enabled, c.Owner)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(err, dialect.ErrTaken)
	}
	return nil
}

// Cron reads a cron; the write transaction already holds the database.
func (t tx) Cron(ctx context.Context, id string) (dialect.CronRow, error) {
	c, err := dialect.ScanCron(t.s.conn.QueryRowContext(ctx, `SELECT `+dialect.CronColumns+` FROM crons WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return c, dialect.ErrNoRow
	}
	return c, err
}

func (t tx) UpdateCron(ctx context.Context, c dialect.CronRow) error {
	_, err := t.s.conn.ExecContext(ctx, `UPDATE crons SET assistant_id = ?, thread_id = ?, schedule = ?, timezone = ?,
		payload = ?, metadata = ?, on_run_completed = ?, next_run_at = ?, end_time = ?, updated_at = ?, enabled = ? WHERE id = ?`,
		c.AssistantID, c.ThreadID, c.Schedule, c.Timezone, c.Payload, c.Metadata, c.OnRunCompleted,
		c.NextRunAt, c.EndTime, c.UpdatedAt, c.Enabled, c.ID)
	return err
}

func (t tx) DeleteCron(ctx context.Context, id string) error {
	return affected(t.s.conn.ExecContext(ctx, `DELETE FROM crons WHERE id = ?`, id))
}

func (t tx) ClaimCron(ctx context.Context, id string, at, next, now int64) (bool, error) {
	err := affected(t.s.conn.ExecContext(ctx, `UPDATE crons SET next_run_at = ?, updated_at = ? WHERE id = ? AND next_run_at = ?`, next, now, id, at))
	if errors.Is(err, dialect.ErrNoRow) {
		return false, nil
	}
	return err == nil, err
}

// affected turns a statement that changed no row into dialect.ErrNoRow.
func affected(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(err, dialect.ErrNoRow)
	}
	return nil
}
