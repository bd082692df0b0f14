package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Item reads one item of the key-value store, or dialect.ErrNoRow.
func (s *DB) Item(ctx context.Context, namespace, key string) (dialect.ItemRow, error) {
	defer s.lockRead()()
	it := dialect.ItemRow{Namespace: namespace, Key: key}
	err := s.rq.QueryRowContext(ctx, `SELECT value, created_at, updated_at FROM store_items WHERE namespace = ? AND key = ?`,
		namespace, key).Scan(&it.Value, &it.CreatedAt, &it.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return it, dialect.ErrNoRow
	}
	return it, err
}

// Items reads the items under a namespace prefix, newest update first.
func (s *DB) Items(ctx context.Context, prefix string, each func(dialect.ItemRow) error) error {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT namespace, key, value, created_at, updated_at FROM store_items
		WHERE substr(namespace, 1, length(?1)) = ?1 ORDER BY updated_at DESC, namespace, key`, prefix)
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
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT DISTINCT namespace FROM store_items
		WHERE substr(namespace, 1, length(?1)) = ?1 ORDER BY namespace`, prefix)
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

func (t tx) PutItem(ctx context.Context, it dialect.ItemRow) error {
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO store_items (namespace, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		it.Namespace, it.Key, it.Value, it.CreatedAt, it.UpdatedAt)
	return err
}

func (t tx) DeleteItem(ctx context.Context, namespace, key string) error {
	_, err := t.s.conn.ExecContext(ctx, `DELETE FROM store_items WHERE namespace = ? AND key = ?`, namespace, key)
	return err
}
