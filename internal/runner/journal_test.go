package runner

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// failingSteps is a store whose next SaveStep fails while fail is set.
type failingSteps struct {
	store.Store
	fail bool
}

func (s *failingSteps) SaveStep(ctx context.Context, st store.Step) error {
	if s.fail {
		s.fail = false
		return errors.New("disk full")
	}
	return s.Store.SaveStep(ctx, st)
}

// TestJournalKeepsWhatAFailedSaveLeft: a step the store refuses leaves the
// journal where it was, so that the next save (here the last step, with
// the end of the run and done) takes the next step number and the events
// the refused one did not save, in order.
func TestJournalKeepsWhatAFailedSaveLeft(t *testing.T) {
	ctx := context.Background()
	sqlite, err := store.Open(filepath.Join(t.TempDir(), "dawn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sqlite.Close()
	st := &failingSteps{Store: sqlite}
	m := New(st, nil, Options{})
	run := &Run{ID: "r1", ThreadID: "t1", RouteID: "/r", Log: stream.NewLog()}
	cp, err := st.BeginRunChecked(ctx, store.Run{ID: run.ID, ThreadID: run.ThreadID, Route: run.RouteID, Status: store.RunRunning}, func(store.Checkpoint) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	j := newJournal(m, run, cp.Step, thread.State{})

	first := thread.State{"n": json.RawMessage(`1`)}
	run.Log.Publish(stream.New("a", 1))
	if err := j.Checkpoint(ctx, []thread.Message{{Role: thread.RoleUser, Content: "go"}}, first); err != nil {
		t.Fatal(err)
	}
	run.Log.Publish(stream.New("b", 2))
	st.fail = true
	if err := j.Checkpoint(ctx, nil, thread.State{"n": json.RawMessage(`2`)}); err == nil {
		t.Fatal("the refused save reported no error")
	}
	if saved, last := j.saved(); !saved || string(last["n"]) != `1` {
		t.Fatalf("after a refused save: saved %v, last state %v; want the first step's", saved, last)
	}

	done := stream.Event{ID: run.Log.LastID() + 1, Type: stream.TypeDone, Data: json.RawMessage(`{}`)}
	end := &store.Finish{Status: store.RunSuccess, Output: json.RawMessage(`{}`)}
	if err := j.save(ctx, []thread.Message{{Role: thread.RoleAssistant, Content: "done"}}, thread.State{"n": json.RawMessage(`3`)}, end, done); err != nil {
		t.Fatal(err)
	}
	latest, err := st.Latest(ctx, run.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Step != cp.Step+2 || string(latest.Values["n"]) != `3` || len(latest.Messages) != 2 {
		t.Fatalf("latest checkpoint: step %d (want %d), values %v, %d messages", latest.Step, cp.Step+2, latest.Values, len(latest.Messages))
	}
	events, err := st.Events(ctx, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.Type)
	}
	if want := []string{"a", "b", stream.TypeDone}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("saved events %v, want %v", got, want)
	}
	r, err := st.GetRun(ctx, run.ID)
	if err != nil || r.Status != store.RunSuccess {
		t.Fatalf("run record %+v, %v; want it finished as a success with the last step", r, err)
	}
}
