package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dawn-go/dawn/thread"
)

// SetAppValues keeps values (key → JSON) for the whole app, replacing any
// value already kept under the same key, in one transaction.
func (s *SQLite) SetAppValues(ctx context.Context, values map[string]json.RawMessage) error {
	if err := checkAppValues(values); err != nil || len(values) == 0 {
		return err
	}
	return s.write(ctx, func(ctx context.Context) error {
		now := s.now()
		for k, v := range values {
			_, err := s.conn.ExecContext(ctx, `INSERT INTO app_values (key, value, updated_at) VALUES (?, ?, ?)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, k, string(v), now)
			if err != nil {
				return fmt.Errorf("store: set app value %q: %w", k, err)
			}
		}
		return nil
	})
}

// AppValues returns every value SetAppValues kept.
func (s *SQLite) AppValues(ctx context.Context) (thread.State, error) {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT key, value FROM app_values`)
	if err != nil {
		return nil, fmt.Errorf("store: read app values: %w", err)
	}
	defer rows.Close()
	return scanAppValues(rows)
}

// checkAppValues refuses an empty key or a value that is not JSON, before
// either store writes anything.
func checkAppValues(values map[string]json.RawMessage) error {
	for k, v := range values {
		if k == "" || !json.Valid(v) {
			return fmt.Errorf("app value %q: %w: the key must not be empty and the value must be JSON", k, ErrInvalid)
		}
	}
	return nil
}

// scanAppValues reads the rows of app_values (key, value).
func scanAppValues(rows rowScanner) (thread.State, error) {
	out := thread.State{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("store: read app values: %w", err)
		}
		out[k] = json.RawMessage(v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read app values: %w", err)
	}
	return out, nil
}
