package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// live is the condition of an item that has not expired by ?2.
const live = `(expires_at IS NULL OR expires_at > ?2)`

// itemColumns are the columns an ItemRow is read from, NULL as 0.
const itemColumns = `namespace, key, value, created_at, updated_at, COALESCE(ttl_minutes, 0), COALESCE(expires_at, 0)`

// The sweep's statements read the index of the expiring items only
// (store_items_expiry), so that they cost next to nothing when no item
// has expired.
const (
	anyExpiredItem     = `SELECT 1 FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT 1`
	deleteExpiredItems = `DELETE FROM store_items WHERE (namespace, key) IN (
		SELECT namespace, key FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?)`
)

func scanItem(sc interface{ Scan(...any) error }, it *dialect.ItemRow) error {
	return sc.Scan(&it.Namespace, &it.Key, &it.Value, &it.CreatedAt, &it.UpdatedAt, &it.TTLMinutes, &it.ExpiresAt)
}

// Item reads one item of the key-value store, or dialect.ErrNoRow.
func (s *DB) Item(ctx context.Context, namespace, key string, at int64) (dialect.ItemRow, error) {
	defer s.lockRead()()
	var it dialect.ItemRow
	err := scanItem(s.rq.QueryRowContext(ctx, `SELECT `+itemColumns+` FROM store_items
		WHERE namespace = ?1 AND key = ?3 AND `+live, namespace, at, key), &it)
	if errors.Is(err, sql.ErrNoRows) {
		return it, dialect.ErrNoRow
	}
	return it, err
}

// Items reads the items under a namespace prefix, newest update first.
func (s *DB) Items(ctx context.Context, prefix string, at int64, each func(dialect.ItemRow) error) error {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT `+itemColumns+` FROM store_items
		WHERE substr(namespace, 1, length(?1)) = ?1 AND `+live+` ORDER BY updated_at DESC, namespace, key`, prefix, at)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var it dialect.ItemRow
		if err := scanItem(rows, &it); err != nil {
			return err
		}
		if err := each(it); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ItemNamespaces reads each namespace under a prefix once, in order.
func (s *DB) ItemNamespaces(ctx context.Context, prefix string, at int64, each func(string) error) error {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT DISTINCT namespace FROM store_items
		WHERE substr(namespace, 1, length(?1)) = ?1 AND `+live+` ORDER BY namespace`, prefix, at)
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

// AnyExpiredItem reports whether any item expired by at, from the index
// of the expiring items.
func (s *DB) AnyExpiredItem(ctx context.Context, at int64) (bool, error) {
	defer s.lockRead()()
	var one int
	err := s.rq.QueryRowContext(ctx, anyExpiredItem, at).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (t tx) PutItem(ctx context.Context, it dialect.ItemRow, at int64) error {
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO store_items (namespace, key, value, created_at, updated_at, ttl_minutes, expires_at)
		VALUES (?1, ?2, ?3, ?4, ?5, NULLIF(?6, 0), NULLIF(?7, 0))
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
			ttl_minutes = excluded.ttl_minutes, expires_at = excluded.expires_at,
			created_at = CASE WHEN store_items.expires_at <= ?8 THEN excluded.created_at ELSE store_items.created_at END`,
		it.Namespace, it.Key, it.Value, it.CreatedAt, it.UpdatedAt, it.TTLMinutes, it.ExpiresAt, at)
	return err
}

func (t tx) RefreshItem(ctx context.Context, namespace, key string, expiresAt, at int64) error {
	_, err := t.s.conn.ExecContext(ctx, `UPDATE store_items SET expires_at = ?
		WHERE namespace = ? AND key = ? AND ttl_minutes IS NOT NULL AND expires_at > ?`, expiresAt, namespace, key, at)
	return err
}

func (t tx) DeleteExpiredItems(ctx context.Context, at int64, limit int) (int, error) {
	res, err := t.s.conn.ExecContext(ctx, deleteExpiredItems, at, limit)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func (t tx) DeleteItem(ctx context.Context, namespace, key string) error {
	_, err := t.s.conn.ExecContext(ctx, `DELETE FROM store_items WHERE namespace = ? AND key = ?`, namespace, key)
	return err
}
