package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ToolOutput reads a page of a stored tool output, or dialect.ErrNoRow.
// data is a BLOB, so substr and length count bytes.
func (s *DB) ToolOutput(ctx context.Context, threadID, id string, offset, limit int64) (dialect.ToolOutputRow, error) {
	defer s.lockRead()()
	o := dialect.ToolOutputRow{ID: id}
	err := s.rq.QueryRowContext(ctx, `SELECT o.tool, substr(o.data, ? + 1, ?), length(o.data) FROM tool_outputs o
		JOIN threads t ON t.pk = o.thread WHERE t.id = ? AND o.id = ?`, offset, limit, threadID, id).Scan(&o.Tool, &o.Data, &o.Total)
	if errors.Is(err, sql.ErrNoRows) {
		return o, dialect.ErrNoRow
	}
	return o, err
}

func (t tx) InsertToolOutput(ctx context.Context, threadPK int64, o dialect.ToolOutputRow, now int64) error {
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO tool_outputs (thread, id, tool, data, created_at) VALUES (?, ?, ?, ?, ?)`,
		threadPK, o.ID, o.Tool, o.Data, now)
	var e *sqlite.Error
	if errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
		return dialect.ErrTaken
	}
	return err
}
