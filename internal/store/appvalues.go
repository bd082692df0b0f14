package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/thread"
)

// SetAppValues keeps values (key → JSON) for the whole app, replacing any
// value already kept under the same key, in one transaction.
func (s *DB) SetAppValues(ctx context.Context, values map[string]json.RawMessage) error {
	if err := checkAppValues(values); err != nil || len(values) == 0 {
		return err
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		now := s.now()
		for k, v := range values {
			if err := tx.SetAppValue(ctx, k, string(v), now); err != nil {
				return fmt.Errorf("store: set app value %q: %w", k, err)
			}
		}
		return nil
	})
}

// AppValues returns every value SetAppValues kept.
func (s *DB) AppValues(ctx context.Context) (thread.State, error) {
	out := thread.State{}
	err := s.d.AppValues(ctx, func(k, v string) error {
		out[k] = json.RawMessage(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read app values: %w", err)
	}
	return out, nil
}

// checkAppValues refuses an empty key or a value that is not JSON, before
// anything is written.
func checkAppValues(values map[string]json.RawMessage) error {
	for k, v := range values {
		if k == "" || !json.Valid(v) {
			return fmt.Errorf("app value %q: %w: the key must not be empty and the value must be JSON", k, ErrInvalid)
		}
	}
	return nil
}
