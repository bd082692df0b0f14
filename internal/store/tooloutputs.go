package store

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// ToolOutput is a stored tool output, or a page of one: Data holds the
// bytes read and Total the whole output's size.
type ToolOutput struct {
	ID, Tool string
	Data     []byte
	Total    int64
}

// PutToolOutput keeps data, the output of a call of tool too large to show
// a model whole, with thread threadID under id, until the thread is
// deleted. The thread must exist (ErrNotFound); an id it already keeps is
// ErrExists.
func (s *DB) PutToolOutput(ctx context.Context, threadID, id, tool string, data []byte) error {
	if id == "" {
		return fmt.Errorf("tool output id: %w: it must be non-empty", ErrInvalid)
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockThread(ctx, threadID)
		switch {
		case errors.Is(err, dialect.ErrNoRow):
			return fmt.Errorf("thread %q: %w", threadID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: put tool output %q of thread %q: %w", id, threadID, err)
		}
		err = tx.InsertToolOutput(ctx, l.PK, dialect.ToolOutputRow{ID: id, Tool: tool, Data: data}, s.now())
		if errors.Is(err, dialect.ErrTaken) {
			return fmt.Errorf("tool output %q of thread %q: %w", id, threadID, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("store: put tool output %q of thread %q: %w", id, threadID, err)
		}
		return nil
	})
}

// maxOutputRange bounds the offset and the limit a dialect is asked for:
// no store keeps an output that large (a Postgres bytea holds at most
// 1 GiB, a SQLite blob 1 GB), and Postgres's substring takes 32-bit
// positions, so a larger value would be an error there and a page past
// the end elsewhere.
const maxOutputRange = math.MaxInt32 - 1

// ReadToolOutput reads at most limit bytes from byte offset of the tool
// output id of thread threadID, or ErrNotFound. An offset past the end
// reads no bytes, however far past it is.
func (s *DB) ReadToolOutput(ctx context.Context, threadID, id string, offset, limit int64) (ToolOutput, error) {
	if offset < 0 || limit < 0 {
		return ToolOutput{}, fmt.Errorf("tool output %q: %w: offset and limit must be 0 or more", id, ErrInvalid)
	}
	offset, limit = min(offset, maxOutputRange), min(limit, maxOutputRange)
	row, err := s.d.ToolOutput(ctx, threadID, id, offset, limit)
	if errors.Is(err, dialect.ErrNoRow) {
		return ToolOutput{}, fmt.Errorf("tool output %q of thread %q: %w", id, threadID, ErrNotFound)
	}
	if err != nil {
		return ToolOutput{}, fmt.Errorf("store: read tool output %q of thread %q: %w", id, threadID, err)
	}
	return ToolOutput(row), nil
}
