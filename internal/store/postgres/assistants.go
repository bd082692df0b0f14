package postgres

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
)

// Assistants reads the assistants, or versions, f selects.
func (s *DB) Assistants(ctx context.Context, f dialect.AssistantFilter) ([]dialect.AssistantRow, error) {
	a := &dialect.Args{Numbered: true}
	rows, err := s.pool.Query(ctx, dialect.AssistantQuery(a, f, jsonEqual), a.List...)
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
	a := &dialect.Args{Numbered: true}
	from := dialect.AssistantWhere(a, f, jsonEqual)
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*)`+from, a.List...).Scan(&n)
	return n, err
}

const assistantValues = `VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

func assistantArgs(r dialect.AssistantRow) []any {
	return []any{r.ID, r.Version, r.GraphID, r.Name, r.Description, r.Config, r.Context, r.Metadata, r.CreatedAt, r.UpdatedAt}
}

func (t *tx) InsertAssistant(ctx context.Context, r dialect.AssistantRow) error {
	tag, err := t.exec(ctx, `INSERT INTO assistants (`+dialect.AssistantColumns+`) `+assistantValues+` ON CONFLICT (id) DO NOTHING`, assistantArgs(r)...)
	if err == nil && tag.RowsAffected() == 0 {
		return dialect.ErrTaken
	}
	return err
}

// Assistant reads an assistant and locks its row until commit.
func (t *tx) Assistant(ctx context.Context, id string) (dialect.AssistantRow, error) {
	if err := t.flush(ctx); err != nil {
		return dialect.AssistantRow{}, err
	}
	r, err := dialect.ScanAssistant(t.tx.QueryRow(ctx, `SELECT `+dialect.AssistantColumns+` FROM assistants WHERE id = $1 FOR UPDATE`, id).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, dialect.ErrNoRow
	}
	return r, err
}

func (t *tx) AssistantVersion(ctx context.Context, id string, version int) (dialect.AssistantRow, error) {
	if err := t.flush(ctx); err != nil {
		return dialect.AssistantRow{}, err
	}
	r, err := dialect.ScanAssistant(t.tx.QueryRow(ctx, `SELECT `+dialect.AssistantColumns+` FROM assistant_versions WHERE id = $1 AND version = $2`, id, version).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, dialect.ErrNoRow
	}
	return r, err
}

func (t *tx) LastAssistantVersion(ctx context.Context, id string) (int, error) {
	if err := t.flush(ctx); err != nil {
		return 0, err
	}
	var n int
	err := t.tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM assistant_versions WHERE id = $1`, id).Scan(&n)
	return n, err
}

func (t *tx) PutAssistant(_ context.Context, r dialect.AssistantRow) error {
	t.queue(`INSERT INTO assistants (`+dialect.AssistantColumns+`) `+assistantValues+` ON CONFLICT (id) DO UPDATE SET
		version = EXCLUDED.version, graph_id = EXCLUDED.graph_id, name = EXCLUDED.name, description = EXCLUDED.description,
		config = EXCLUDED.config, context = EXCLUDED.context, metadata = EXCLUDED.metadata, updated_at = EXCLUDED.updated_at`, assistantArgs(r)...)
	return nil
}

func (t *tx) InsertAssistantVersion(_ context.Context, r dialect.AssistantRow) error {
	t.queue(`INSERT INTO assistant_versions (`+dialect.AssistantColumns+`) `+assistantValues, assistantArgs(r)...)
	return nil
}

func (t *tx) DeleteAssistant(ctx context.Context, id string) error {
	t.queue(`DELETE FROM assistant_versions WHERE id = $1`, id)
	tag, err := t.exec(ctx, `DELETE FROM assistants WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		return dialect.ErrNoRow
	}
	return err
}

func (t *tx) ThreadMetadata(ctx context.Context, threadPK int64) (string, error) {
	if err := t.flush(ctx); err != nil {
		return "", err
	}
	var meta string
	err := t.tx.QueryRow(ctx, `SELECT metadata FROM threads WHERE pk = $1`, threadPK).Scan(&meta)
	return meta, err
}

func (t *tx) SetThreadMetadata(_ context.Context, threadPK int64, metadata string, now int64) error {
	t.queue(`UPDATE threads SET metadata = $1, updated_at = $2, expires_at = $2 + ttl WHERE pk = $3`, metadata, now, threadPK)
	return nil
}
