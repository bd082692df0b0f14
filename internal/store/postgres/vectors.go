package postgres

import (
	"context"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// ItemVectors reads the vectors of one item, in path order.
func (s *DB) ItemVectors(ctx context.Context, namespace, key string) ([]dialect.VectorRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT path, digest, vector FROM store_item_vectors
		WHERE namespace = $1 AND key = $2 ORDER BY path`, namespace, key)
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
	rows, err := s.pool.Query(ctx, `SELECT namespace, key, path, vector FROM store_item_vectors
		WHERE starts_with(namespace, $1)`, prefix)
	if err != nil {
		return err
	}
	defer rows.Close()
	var v dialect.VectorRow
	for rows.Next() {
		raw := rows.RawValues()
		// The text columns are copied (they are few bytes); the vector,
		// the bulk of the row, is read in place.
		v.Namespace, v.Key, v.Path, v.Vector = string(raw[0]), string(raw[1]), string(raw[2]), raw[3]
		if err := each(v); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *tx) SetItemVectors(_ context.Context, namespace, key string, rows []dialect.VectorRow) error {
	t.queue(`DELETE FROM store_item_vectors WHERE namespace = $1 AND key = $2`, namespace, key)
	for _, v := range rows {
		t.queue(`INSERT INTO store_item_vectors (namespace, key, path, digest, vector) VALUES ($1, $2, $3, $4, $5)`,
			namespace, key, v.Path, v.Digest, v.Vector)
	}
	return nil
}
