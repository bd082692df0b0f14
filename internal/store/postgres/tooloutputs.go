package postgres

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
)

// ToolOutput reads a page of a stored tool output, or dialect.ErrNoRow.
func (s *DB) ToolOutput(ctx context.Context, threadID, id string, offset, limit int64) (dialect.ToolOutputRow, error) {
	o := dialect.ToolOutputRow{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT o.tool, substring(o.data from ($1::bigint + 1)::int for least($2::bigint, 2147483647)::int), octet_length(o.data) FROM tool_outputs o
		JOIN threads t ON t.pk = o.thread WHERE t.id = $3 AND o.id = $4`, offset, limit, threadID, id).Scan(&o.Tool, &o.Data, &o.Total)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, dialect.ErrNoRow
	}
	return o, err
}

// InsertToolOutput runs at once, so that a used id is reported as such.
func (t *tx) InsertToolOutput(ctx context.Context, threadPK int64, o dialect.ToolOutputRow, now int64) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO tool_outputs (thread, id, tool, data, created_at) VALUES ($1, $2, $3, $4, $5)`,
		threadPK, o.ID, o.Tool, o.Data, now)
	if uniqueViolation(err) != "" {
		return dialect.ErrTaken
	}
	return err
}
