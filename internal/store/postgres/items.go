package postgres

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
)

// live is the condition of an item that has not expired by $2.
const live = `(expires_at IS NULL OR expires_at > $2)`

// itemColumns are the columns an ItemRow is read from, NULL as 0.
const itemColumns = `namespace, key, value, created_at, updated_at, COALESCE(ttl_minutes, 0), COALESCE(expires_at, 0)`

func scanItem(sc interface{ Scan(...any) error }, it *dialect.ItemRow) error {
	return sc.Scan(&it.Namespace, &it.Key, &it.Value, &it.CreatedAt, &it.UpdatedAt, &it.TTLMinutes, &it.ExpiresAt)
}

// Item reads one item of the key-value store, or dialect.ErrNoRow.
func (s *DB) Item(ctx context.Context, namespace, key string, at int64) (dialect.ItemRow, error) {
	var it dialect.ItemRow
	err := scanItem(s.pool.QueryRow(ctx, `SELECT `+itemColumns+` FROM store_items
		WHERE namespace = $1 AND key = $3 AND `+live, namespace, at, key), &it)
	if errors.Is(err, pgx.ErrNoRows) {
		return it, dialect.ErrNoRow
	}
	return it, err
}

// Items reads the items under a namespace prefix, newest update first.
func (s *DB) Items(ctx context.Context, prefix string, at int64, each func(dialect.ItemRow) error) error {
	rows, err := s.pool.Query(ctx, `SELECT `+itemColumns+` FROM store_items
		WHERE starts_with(namespace, $1) AND `+live+` ORDER BY updated_at DESC, namespace, key`, prefix, at)
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
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT namespace FROM store_items
		WHERE starts_with(namespace, $1) AND `+live+` ORDER BY namespace`, prefix, at)
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
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM store_items
		WHERE expires_at IS NOT NULL AND expires_at <= $1)`, at).Scan(&found)
	return found, err
}

func (t *tx) PutItem(_ context.Context, it dialect.ItemRow, at int64) error {
	t.queue(`INSERT INTO store_items (namespace, key, value, created_at, updated_at, ttl_minutes, expires_at)
		VALUES ($1, $2, $3, $4, $5, NULLIF($6::double precision, 0), NULLIF($7::bigint, 0))
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
			ttl_minutes = excluded.ttl_minutes, expires_at = excluded.expires_at,
			created_at = CASE WHEN store_items.expires_at <= $8 THEN excluded.created_at ELSE store_items.created_at END`,
		it.Namespace, it.Key, it.Value, it.CreatedAt, it.UpdatedAt, it.TTLMinutes, it.ExpiresAt, at)
	return nil
}

func (t *tx) RefreshItem(_ context.Context, namespace, key string, expiresAt, at int64) error {
	t.queue(`UPDATE store_items SET expires_at = $1
		WHERE namespace = $2 AND key = $3 AND ttl_minutes IS NOT NULL AND expires_at > $4`, expiresAt, namespace, key, at)
	return nil
}

// DeleteExpiredItems skips the rows another transaction holds (a put, a
// refresh, or the sweep of another replica), so that replicas sweeping
// at once neither wait for nor deadlock on each other.
func (t *tx) DeleteExpiredItems(ctx context.Context, at int64, limit int) (int, error) {
	if err := t.flush(ctx); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM store_items WHERE (namespace, key) IN (
		SELECT namespace, key FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= $1
		ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, at, limit)
	return int(tag.RowsAffected()), err
}

func (t *tx) DeleteItem(_ context.Context, namespace, key string) error {
	t.queue(`DELETE FROM store_items WHERE namespace = $1 AND key = $2`, namespace, key)
	return nil
}
