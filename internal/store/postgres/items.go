package postgres

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
)

// Item reads one item of the key-value store, or dialect.ErrNoRow.
func (s *DB) Item(ctx context.Context, namespace, key string) (dialect.ItemRow, error) {
	it := dialect.ItemRow{Namespace: namespace, Key: key}
	err := s.pool.QueryRow(ctx, `SELECT value, created_at, updated_at FROM store_items WHERE namespace = $1 AND key = $2`,
		namespace, key).Scan(&it.Value, &it.CreatedAt, &it.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return it, dialect.ErrNoRow
	}
	return it, err
}

// Items reads the items under a namespace prefix, newest update first.
func (s *DB) Items(ctx context.Context, prefix string, each func(dialect.ItemRow) error) error {
	rows, err := s.pool.Query(ctx, `SELECT namespace, key, value, created_at, updated_at FROM store_items
		WHERE starts_with(namespace, $1) ORDER BY updated_at DESC, namespace, key`, prefix)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var it dialect.ItemRow
		if err := rows.Scan(&it.Namespace, &it.Key, &it.Value, &it.CreatedAt, &it.UpdatedAt); err != nil {
			return err
		}
		if err := each(it); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ItemNamespaces reads each namespace under a prefix once, in order.
func (s *DB) ItemNamespaces(ctx context.Context, prefix string, each func(string) error) error {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT namespace FROM store_items
		WHERE starts_with(namespace, $1) ORDER BY namespace`, prefix)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return err
		}
		if err := each(ns); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *tx) PutItem(_ context.Context, it dialect.ItemRow) error {
	t.queue(`INSERT INTO store_items (namespace, key, value, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		it.Namespace, it.Key, it.Value, it.CreatedAt, it.UpdatedAt)
	return nil
}

func (t *tx) DeleteItem(_ context.Context, namespace, key string) error {
	t.queue(`DELETE FROM store_items WHERE namespace = $1 AND key = $2`, namespace, key)
	return nil
}
