package sqlite

import (
	"context"
	"strings"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

var _ dialect.Eraser = tx{}

// Erase runs dialect.EraseSteps, with SQLite's ?1 for $1.
func (t tx) Erase(ctx context.Context, e dialect.Erasure) (map[string]int, error) {
	out := map[string]int{}
	for _, st := range dialect.EraseSteps {
		res, err := t.s.conn.ExecContext(ctx, strings.ReplaceAll(st.SQL, "$1", "?1"), st.Arg(e))
		if err != nil {
			return nil, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, err
		}
		out[st.Table] += int(n)
	}
	return out, nil
}
