package sqlite

import (
	"context"
	"database/sql"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// ItemVectors reads the vectors of one item, in path order.
func (s *DB) ItemVectors(ctx context.Context, namespace, key string) ([]dialect.VectorRow, error) {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT path, digest, vector FROM store_item_vectors
		WHERE namespace = ? AND key = ? ORDER BY path`, namespace, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []dialect.VectorRow
	for rows.Next() {
		v := dialect.VectorRow{Namespace: namespace, Key: key}
		if err := rows.Scan(&v.Path, &v.Digest, &v.Vector); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// VectorsUnder reads the vectors of the items under a namespace prefix;
// each row's Vector is the driver's buffer, valid during the call.
func (s *DB) VectorsUnder(ctx context.Context, prefix string, each func(dialect.VectorRow) error) error {
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, `SELECT namespace, key, path, vector FROM store_item_vectors
		WHERE substr(namespace, 1, length(?1)) = ?1`, prefix)
	if err != nil {
		return err
	}
	defer rows.Close()
	var v dialect.VectorRow
	var raw sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&v.Namespace, &v.Key, &v.Path, &raw); err != nil {
			return err
		}
		v.Vector = raw
		if err := each(v); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t tx) SetItemVectors(ctx context.Context, namespace, key string, rows []dialect.VectorRow) error {
	if _, err := t.s.conn.ExecContext(ctx, `DELETE FROM store_item_vectors WHERE namespace = ? AND key = ?`, namespace, key); err != nil {
		return err
	}
	for _, v := range rows {
		if _, err := t.s.conn.ExecContext(ctx, `INSERT INTO store_item_vectors (namespace, key, path, digest, vector) VALUES (?, ?, ?, ?, ?)`,
			namespace, key, v.Path, v.Digest, v.Vector); err != nil {
			return err
		}
	}
	return nil
}
