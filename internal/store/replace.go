package store

import (
	"context"
	"fmt"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/thread"
)

// Rewrite is a state update that may change the messages it finds: given
// the thread's state, it returns how many of its first messages stay as
// they are, the messages that follow them in the new state, and the whole
// new state values.
type Rewrite func(Checkpoint) (keep int, tail []thread.Message, values thread.State, err error)

// merge returns what u makes of cp: Rewrite's answer, or Merge's messages
// added after every message cp has.
func (u StateUpdate) merge(cp Checkpoint) (keep int, tail []thread.Message, values thread.State, err error) {
	if u.Rewrite != nil {
		keep, tail, values, err = u.Rewrite(cp)
		if err == nil && (keep < 0 || keep > len(cp.Messages)) {
			err = fmt.Errorf("thread %q: %w: keep %d of its %d messages", u.ThreadID, ErrInvalid, keep, len(cp.Messages))
		}
		return keep, tail, values, err
	}
	tail, values, err = u.Merge(cp)
	return len(cp.Messages), tail, values, err
}

// branchAt returns the thread l locked as it is when keep is every message
// of its head; otherwise on a new branch that shares the head's first keep
// messages, where the update's messages follow them. The old branch and the
// checkpoints on it keep their messages.
func branchAt(ctx context.Context, tx dialect.HistoryTx, threadID string, l dialect.ThreadLock, keep int64) (dialect.ThreadLock, error) {
	if keep == l.Messages {
		return l, nil
	}
	segs, err := tx.Segments(ctx, threadID, l.Branch)
	if err != nil {
		return l, err
	}
	inherit := make([]dialect.Segment, 0, len(segs)+1)
	for _, sg := range segs {
		if hi := min(sg.Hi, keep); sg.Lo < hi {
			inherit = append(inherit, dialect.Segment{Key: sg.Key, Lo: sg.Lo, Hi: hi})
		}
	}
	if start := ownStart(segs); start < keep {
		inherit = append(inherit, dialect.Segment{Key: l.Branch, Lo: start, Hi: keep})
	}
	key, err := tx.NewBranch(ctx, l.PK, inherit)
	if err != nil {
		return l, err
	}
	l.Branch, l.Messages = key, keep
	return l, nil
}
