package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Assistants reads the assistants, or versions, f selects.
func (s *DB) Assistants(ctx context.Context, f dialect.AssistantFilter) ([]dialect.AssistantRow, error) {
	a := &dialect.Args{}
	query := dialect.AssistantQuery(a, f, jsonEqual)
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, a.List...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []dialect.AssistantRow
	for rows.Next() {
		r, err := dialect.ScanAssistant(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// CountAssistants counts the assistants, or versions, f selects.
func (s *DB) CountAssistants(ctx context.Context, f dialect.AssistantFilter) (int, error) {
	a := &dialect.Args{}
	from := dialect.AssistantWhere(a, f, jsonEqual)
	defer s.lockRead()()
	var n int
	err := s.rq.QueryRowContext(ctx, `SELECT count(*)`+from, a.List...).Scan(&n)
	return n, err
}

const assistantValues = `VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func assistantArgs(r dialect.AssistantRow) []any {
	return []any{r.ID, r.Version, r.GraphID, r.Name, r.Description, r.Config, r.Context, r.Metadata, r.CreatedAt, r.UpdatedAt}
}

func (t tx) InsertAssistant(ctx context.Context, r dialect.AssistantRow) error {
	res, err := t.s.conn.ExecContext(ctx, `INSERT INTO assistants (`+dialect.AssistantColumns+`) `+assistantValues+` ON CONFLICT (id) DO NOTHING`, assistantArgs(r)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(err, dialect.ErrTaken)
	}
	return nil
}

// Assistant reads an assistant; the write transaction already holds the
// database.
func (t tx) Assistant(ctx context.Context, id string) (dialect.AssistantRow, error) {
	r, err := dialect.ScanAssistant(t.s.conn.QueryRowContext(ctx, `SELECT `+dialect.AssistantColumns+` FROM assistants WHERE id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return r, dialect.ErrNoRow
	}
	return r, err
}

func (t tx) AssistantVersion(ctx context.Context, id string, version int) (dialect.AssistantRow, error) {
	r, err := dialect.ScanAssistant(t.s.conn.QueryRowContext(ctx, `SELECT `+dialect.AssistantColumns+` FROM assistant_versions WHERE id = ? AND version = ?`, id, version).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return r, dialect.ErrNoRow
	}
	return r, err
}

func (t tx) LastAssistantVersion(ctx context.Context, id string) (int, error) {
	var n int
	err := t.s.conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM assistant_versions WHERE id = ?`, id).Scan(&n)
	return n, err
}

func (t tx) PutAssistant(ctx context.Context, r dialect.AssistantRow) error {
	_, err := t.s.conn.ExecContext(ctx, `INSERT OR REPLACE INTO assistants (`+dialect.AssistantColumns+`) `+assistantValues, assistantArgs(r)...)
	return err
}

func (t tx) InsertAssistantVersion(ctx context.Context, r dialect.AssistantRow) error {
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO assistant_versions (`+dialect.AssistantColumns+`) `+assistantValues, assistantArgs(r)...)
	return err
}

func (t tx) DeleteAssistant(ctx context.Context, id string) error {
	if _, err := t.s.conn.ExecContext(ctx, `DELETE FROM assistant_versions WHERE id = ?`, id); err != nil {
		return err
	}
	return affected(t.s.conn.ExecContext(ctx, `DELETE FROM assistants WHERE id = ?`, id))
}

func (t tx) ThreadMetadata(ctx context.Context, threadPK int64) (string, error) {
	var meta string
	err := t.s.conn.QueryRowContext(ctx, `SELECT metadata FROM threads WHERE pk = ?`, threadPK).Scan(&meta)
	return meta, err
}

func (t tx) SetThreadMetadata(ctx context.Context, threadPK int64, metadata string, now int64) error {
	_, err := t.s.conn.ExecContext(ctx, `UPDATE threads SET metadata = ?1, updated_at = ?2, expires_at = ?2 + ttl WHERE pk = ?3`, metadata, now, threadPK)
	return err
}
