package store

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/dawn-go/dawn/thread"
)

// rewrite is a StateUpdate that keeps the first keep messages of the
// thread's state and then tail, with the values as they are.
func rewrite(threadID string, keep int, tail ...string) StateUpdate {
	return StateUpdate{ThreadID: threadID, Rewrite: func(cp Checkpoint) (int, []thread.Message, thread.State, error) {
		msgs := make([]thread.Message, len(tail))
		for i, c := range tail {
			msgs[i] = thread.Message{Role: thread.RoleUser, Content: c}
		}
		return keep, msgs, cp.Values, nil
	}}
}

// TestRewriteState, on SQLite and Postgres: an update that changes a
// message the thread has is a new checkpoint on a new branch sharing the
// messages before it; earlier checkpoints, the old branch and the thread a
// copy was made from keep the old message, and a run goes on from the new
// state.
func TestRewriteState(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		exchange(t, s, "th", "run-1", "", "q1", "a1", `[]`)
		exchange(t, s, "th", "run-2", "", "q2", "a2", `[]`)
		old, err := s.Latest(ctx, "th")
		must(t, err)
		cp, err := s.UpdateState(ctx, rewrite("th", 1, "a1 edited", "q2", "a2"))
		must(t, err)
		if got := contents(cp.Messages); !slices.Equal(got, []string{"q1", "a1 edited", "q2", "a2"}) || cp.Branch == old.Branch || cp.Step != old.Step+1 {
			t.Fatalf("after the rewrite: %v on branch %d at step %d (was branch %d step %d)", got, cp.Branch, cp.Step, old.Branch, old.Step)
		}
		if len(cp.Origins) != 4 || cp.Origins[0] != old.Branch || cp.Origins[1] != cp.Branch {
			t.Errorf("origins %v: the first message is shared with branch %d, the rest are the new branch's %d", cp.Origins, old.Branch, cp.Branch)
		}
		was, err := s.CheckpointAt(ctx, "th", old.ID)
		must(t, err)
		if got := contents(was.Messages); !slices.Equal(got, []string{"q1", "a1", "q2", "a2"}) {
			t.Errorf("the checkpoint before the rewrite now reads %v", got)
		}
		h, err := s.History(ctx, "th", HistoryQuery{Limit: 1})
		must(t, err)
		if h[0].ID != cp.ID || h[0].ParentID != old.ID || h[0].Source != SourceUpdate || !slices.Equal(contents(h[0].Messages), contents(cp.Messages)) {
			t.Errorf("the rewrite in history: %s parent %s source %q %v", h[0].ID, h[0].ParentID, h[0].Source, contents(h[0].Messages))
		}
		exchange(t, s, "th", "run-3", "", "q3", "a3", `[]`)
		latest, err := s.Latest(ctx, "th")
		must(t, err)
		if got := contents(latest.Messages); !slices.Equal(got, []string{"q1", "a1 edited", "q2", "a2", "q3", "a3"}) {
			t.Errorf("a run after the rewrite: %v", got)
		}
		same, err := s.UpdateState(ctx, rewrite("th", 6, "note"))
		must(t, err)
		if same.Branch != latest.Branch || len(same.Messages) != 7 {
			t.Errorf("a rewrite that keeps every message: branch %d (was %d), %d messages", same.Branch, latest.Branch, len(same.Messages))
		}
		for _, keep := range []int{-1, 8} {
			if _, err := s.UpdateState(ctx, rewrite("th", keep, "x")); !errors.Is(err, ErrInvalid) {
				t.Errorf("keep %d of 7 messages: %v, want ErrInvalid", keep, err)
			}
		}
		_, err = s.CopyThread(ctx, "th", "th-copy")
		must(t, err)
		c, err := s.UpdateState(ctx, rewrite("th-copy", 0, "only"))
		must(t, err)
		orig, err := s.Latest(ctx, "th")
		must(t, err)
		if !slices.Equal(contents(c.Messages), []string{"only"}) || len(orig.Messages) != 7 {
			t.Errorf("a rewrite of the copy: copy %v, original %v", contents(c.Messages), contents(orig.Messages))
		}
	})
}
