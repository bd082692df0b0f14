package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dawn-go/dawn/thread"
	"github.com/jackc/pgx/v5"
)

// SetAppValues keeps values for the whole app (see SQLite.SetAppValues).
func (s *Postgres) SetAppValues(ctx context.Context, values map[string]json.RawMessage) error {
	if err := checkAppValues(values); err != nil || len(values) == 0 {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		now := s.now()
		for k, v := range values {
			_, err := tx.Exec(ctx, `INSERT INTO app_values (key, value, updated_at) VALUES ($1, $2, $3)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, k, string(v), now)
			if err != nil {
				return fmt.Errorf("store: set app value %q: %w", k, err)
			}
		}
		return nil
	})
}

// AppValues returns every value SetAppValues kept.
func (s *Postgres) AppValues(ctx context.Context) (thread.State, error) {
	rows, err := s.pool.Query(ctx, `SELECT key, value FROM app_values`)
	if err != nil {
		return nil, fmt.Errorf("store: read app values: %w", err)
	}
	defer rows.Close()
	return scanAppValues(rows)
}
