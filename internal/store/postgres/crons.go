package postgres

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Crons reads the crons f selects.
func (s *DB) Crons(ctx context.Context, f dialect.CronFilter) ([]dialect.CronRow, error) {
	a := &dialect.Args{Numbered: true}
	rows, err := s.pool.Query(ctx, dialect.CronQuery(a, f), a.List...)
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
	a := &dialect.Args{Numbered: true}
	where := dialect.CronWhere(a, f)
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM crons`+where, a.List...).Scan(&n)
	return n, err
}

func (t *tx) InsertCron(ctx context.Context, c dialect.CronRow) error {
	tag, err := t.exec(ctx, `INSERT INTO crons (`+dialect.CronColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING`,
		c.ID, c.AssistantID, c.ThreadID, c.Schedule, c.Timezone, c.Payload, c.Metadata, c.OnRunCompleted,
		c.NextRunAt, c.EndTime, c.CreatedAt, c.UpdatedAt, c.Enabled, c.Owner)
	if err == nil && tag.RowsAffected() == 0 {
		return dialect.ErrTaken
	}
	return err
}

// Cron reads a cron and locks its row until commit.
func (t *tx) Cron(ctx context.Context, id string) (dialect.CronRow, error) {
	if err := t.flush(ctx); err != nil {
		return dialect.CronRow{}, err
	}
	c, err := dialect.ScanCron(t.tx.QueryRow(ctx, `SELECT `+dialect.CronColumns+` FROM crons WHERE id = $1 FOR UPDATE`, id).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, dialect.ErrNoRow
	}
	return c, err
}

func (t *tx) UpdateCron(_ context.Context, c dialect.CronRow) error {
	t.queue(`UPDATE crons SET assistant_id = $1, thread_id = $2, schedule = $3, timezone = $4,
		payload = $5, metadata = $6, on_run_completed = $7, next_run_at = $8, end_time = $9, updated_at = $10, enabled = $11 WHERE id = $12`,
		c.AssistantID, c.ThreadID, c.Schedule, c.Timezone, c.Payload, c.Metadata, c.OnRunCompleted,
		c.NextRunAt, c.EndTime, c.UpdatedAt, c.Enabled, c.ID)
	return nil
}

func (t *tx) DeleteCron(ctx context.Context, id string) error {
	tag, err := t.exec(ctx, `DELETE FROM crons WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		return dialect.ErrNoRow
	}
	return err
}

// ClaimCron moves the tick with one conditional UPDATE: of two
// transactions claiming the same tick, the second waits for the first's
// row lock, then finds next_run_at changed and updates nothing.
func (t *tx) ClaimCron(ctx context.Context, id string, at, next, now int64) (bool, error) {
	tag, err := t.exec(ctx, `UPDATE crons SET next_run_at = $1, updated_at = $2 WHERE id = $3 AND next_run_at = $4`, next, now, id, at)
	return err == nil && tag.RowsAffected() == 1, err
}

// exec flushes the batch, then runs a statement whose row count the
// caller reads.
func (t *tx) exec(ctx context.Context, query string, args ...any) (pgconn.CommandTag, error) {
	if err := t.flush(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return t.tx.Exec(ctx, query, args...)
}
