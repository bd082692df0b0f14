package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

func TestLatestEmpty(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.CreateThread(ctx, "th", nil)
		must(t, err)
		cp, err := s.Latest(ctx, "th")
		must(t, err)
		if cp.ThreadID != "th" || cp.Step != 0 || cp.RunID != "" || cp.Messages == nil || len(cp.Messages) != 0 || cp.Values == nil || len(cp.Values) != 0 {
			t.Errorf("Latest of a new thread = %+v", cp)
		}
		if _, err := s.Latest(ctx, "missing"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Latest(missing) = %v, want ErrNotFound", err)
		}
	})
}

func TestSaveStep(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "th", "run-1")
		user := thread.Message{Role: thread.RoleUser, Content: "Where is my order <#42> & why?"}
		step1 := Step{ThreadID: "th", RunID: "run-1", Route: "/support/[tenant]", Step: 1,
			Append: []thread.Message{user}, Values: thread.State{"todos": json.RawMessage(`[ ]`), "mood": json.RawMessage(`"calm"`)}}
		must(t, s.SaveStep(ctx, step1))
		step2 := sampleStep("th", "run-1", 2, 1)
		must(t, s.SaveStep(ctx, step2))

		cp, err := s.Latest(ctx, "th")
		must(t, err)
		want := append([]thread.Message{user}, step2.Append...)
		if !reflect.DeepEqual(normal(t, cp.Messages), normal(t, want)) {
			t.Errorf("messages:\n got %+v\nwant %+v", cp.Messages, want)
		}
		if len(cp.Values) != 1 || !jsonEqual(t, cp.Values["todos"], todos) {
			t.Errorf("values = %s, want only the todos of step 2", cp.Values)
		}
		if cp.Step != 2 || cp.RunID != "run-1" || cp.Route != "/support/[tenant]" || cp.UpdatedAt.IsZero() {
			t.Errorf("checkpoint = %+v", cp)
		}

		stored := queryString(t, s, `SELECT h.data FROM history h JOIN threads t ON t.pk = h.thread WHERE t.id = 'th' AND h.run = 0 AND h.seq = 0`)
		if stored != `{"role":"user","content":"Where is my order <#42> & why?"}` {
			t.Errorf("stored message %s is not compact and unescaped", stored)
		}

		tests := []struct {
			name string
			step Step
			want error
		}{
			{"repeated step", sampleStep("th", "run-1", 2, 10), ErrStepOrder},
			{"skipped step", sampleStep("th", "run-1", 4, 10), ErrStepOrder},
			{"step zero", sampleStep("th", "run-1", 0, 10), ErrInvalid},
			{"unknown run", sampleStep("th", "nope", 3, 10), ErrNotFound},
			{"other thread", sampleStep("other", "run-1", 3, 10), ErrInvalid},
			{"event without id", withEvents(sampleStep("th", "run-1", 3, 10), stream.Event{Type: "x"}), ErrInvalid},
			{"bad value", withValue(sampleStep("th", "run-1", 3, 10), json.RawMessage(`{`)), ErrInvalid},
		}
		for _, tt := range tests {
			if err := s.SaveStep(ctx, tt.step); !errors.Is(err, tt.want) {
				t.Errorf("%s: SaveStep = %v, want %v", tt.name, err, tt.want)
			}
		}
		// A failure inside the transaction (event 1 already exists) leaves
		// nothing behind.
		if err := s.SaveStep(ctx, sampleStep("th", "run-1", 3, 1)); err == nil {
			t.Fatal("SaveStep with a duplicate event id succeeded")
		}
		after, err := s.Latest(ctx, "th")
		must(t, err)
		if after.Step != 2 || len(after.Messages) != 3 {
			t.Errorf("after a failed step: step %d, %d messages; want 2 and 3", after.Step, len(after.Messages))
		}
		must(t, s.SaveStep(ctx, sampleStep("th", "run-1", 3, 4)))

		must(t, s.FinishRun(ctx, "run-1", RunSuccess, "", nil, nil))
		if err := s.SaveStep(ctx, sampleStep("th", "run-1", 4, 20)); !errors.Is(err, ErrNotRunning) {
			t.Errorf("SaveStep after FinishRun = %v, want ErrNotRunning", err)
		}
		// The next run continues the thread's step count.
		must(t, startRun(ctx, s, Run{ID: "run-2", ThreadID: "th"}))
		must(t, s.SaveStep(ctx, sampleStep("th", "run-2", 4, 1)))
		cp, err = s.Latest(ctx, "th")
		must(t, err)
		if cp.Step != 4 || cp.RunID != "run-2" || len(cp.Messages) != 7 {
			t.Errorf("after run 2: step %d run %s, %d messages", cp.Step, cp.RunID, len(cp.Messages))
		}
	})
}

func TestEventsAfter(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "th", "run-1")
		must(t, s.SaveStep(ctx, sampleStep("th", "run-1", 1, 1)))
		must(t, s.SaveStep(ctx, sampleStep("th", "run-1", 2, 4)))
		must(t, s.FinishRun(ctx, "run-1", RunSuccess, "", nil, []stream.Event{{ID: 7, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{}}`)}}))
		for _, tt := range []struct {
			after int64
			want  []int64
		}{
			{0, []int64{1, 2, 3, 4, 5, 6, 7}},
			{3, []int64{4, 5, 6, 7}},
			{7, nil},
			{100, nil},
		} {
			evs, err := s.Events(ctx, "run-1", tt.after)
			must(t, err)
			var ids []int64
			for _, ev := range evs {
				ids = append(ids, ev.ID)
			}
			if !reflect.DeepEqual(ids, tt.want) || evs == nil {
				t.Errorf("Events after %d = %v, want %v", tt.after, ids, tt.want)
			}
		}
		evs, err := s.Events(ctx, "run-1", 1)
		must(t, err)
		if evs[0].Type != "plan_update" || !jsonEqual(t, evs[0].Data, json.RawMessage(`{"todos":`+string(todos)+`}`)) {
			t.Errorf("event 2 = %s %s", evs[0].Type, evs[0].Data)
		}
		if _, err := s.Events(ctx, "nope", 0); !errors.Is(err, ErrNotFound) {
			t.Errorf("Events(nope) = %v, want ErrNotFound", err)
		}
	})
}

func TestLatestPersisted(t *testing.T) {
	eachDurable(t, testLatestPersisted)
}

func testLatestPersisted(t *testing.T, open func() Store) {
	ctx := context.Background()
	s := open()
	newRun(t, s, "th", "run-1")
	must(t, s.SaveStep(ctx, sampleStep("th", "run-1", 1, 1)))
	must(t, s.SaveStep(ctx, sampleStep("th", "run-1", 2, 4)))
	must(t, s.FinishRun(ctx, "run-1", RunSuccess, "", json.RawMessage(`{"ok":true}`), nil))
	before, err := s.Latest(ctx, "th")
	must(t, err)
	must(t, s.Close())

	s = open()
	after, err := s.Latest(ctx, "th")
	must(t, err)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("after reopening:\n got %+v\nwant %+v", after, before)
	}
}

// TestConcurrentReadsDuringWrites runs readers beside a writer; run it with
// -race. Every checkpoint a reader sees must be whole: 2 messages per step.
func TestConcurrentReadsDuringWrites(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "th", "run-1")
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					cp, err := s.Latest(ctx, "th")
					if err != nil {
						t.Error(err)
						return
					}
					if len(cp.Messages) != 2*cp.Step {
						t.Errorf("step %d with %d messages", cp.Step, len(cp.Messages))
						return
					}
				}
			})
		}
		for step := 1; step <= 50; step++ {
			must(t, s.SaveStep(ctx, sampleStep("th", "run-1", step, int64(3*step-2))))
		}
		close(stop)
		wg.Wait()
	})
}

func withEvents(st Step, evs ...stream.Event) Step { st.Events = evs; return st }

func withValue(st Step, v json.RawMessage) Step { st.Values = thread.State{"todos": v}; return st }

// normal round-trips v through JSON so that RawMessage spacing compares equal.
func normal(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	var out any
	must(t, json.Unmarshal(b, &out))
	return out
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	return reflect.DeepEqual(normal(t, a), normal(t, b))
}
