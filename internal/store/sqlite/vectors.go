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
// each row's Vector is the driver's buffer, valid during the call. The
// prefix is a range of the primary key (text compares by bytes here), so
// a search under one user's namespace reads that user's vectors only.
func (s *DB) VectorsUnder(ctx context.Context, prefix string, each func(dialect.VectorRow) error) error {
	defer s.lockRead()()
	query, args := `SELECT namespace, key, path, vector FROM store_item_vectors`, []any{}
	if n := len(prefix); n > 0 && prefix[n-1] < 0xff {
		// Every text that begins with prefix sorts from prefix up to,
		// not including, prefix with its last byte one higher.
		query += ` WHERE namespace >= ? AND namespace < ?`
		args = append(args, prefix, prefix[:n-1]+string([]byte{prefix[n-1] + 1}))
	} else if n > 0 {
		query += ` WHERE substr(namespace, 1, length(?1)) = ?1`
		args = append(args, prefix)
	}
	rows, err := s.rq.QueryContext(ctx, query, args...)
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
