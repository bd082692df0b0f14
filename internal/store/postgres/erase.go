package postgres

import (
	"context"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

var _ dialect.Eraser = (*tx)(nil)

// Erase runs dialect.EraseSteps, each at once for its count.
func (t *tx) Erase(ctx context.Context, e dialect.Erasure) (map[string]int, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, st := range dialect.EraseSteps {
		tag, err := t.tx.Exec(ctx, st.SQL, st.Arg(e))
		if err != nil {
			return nil, err
		}
		out[st.Table] += int(tag.RowsAffected())
	}
	return out, nil
}
