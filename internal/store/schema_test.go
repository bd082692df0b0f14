package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// TestBeginRun covers the three ways a run begins: on a new thread, on a
// thread with history, and refused.
func TestBeginRun(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		cp, err := beginRun(ctx, s, Run{ID: "run-1", ThreadID: "th", Route: "/support/[tenant]"})
		must(t, err)
		if cp.ThreadID != "th" || cp.Step != 0 || cp.Messages == nil || len(cp.Messages) != 0 || cp.Values == nil {
			t.Errorf("BeginRun on a new thread = %+v", cp)
		}
		th, err := s.GetThread(ctx, "th")
		must(t, err)
		if th.Status != StatusBusy || string(th.Metadata) != "{}" {
			t.Errorf("new thread = %+v, want busy with no metadata", th)
		}
		must(t, s.SaveStep(ctx, sampleStep("th", "run-1", 1, 1)))
		want, err := s.Latest(ctx, "th")
		must(t, err)

		tests := []struct {
			name string
			run  Run
			err  error
		}{
			{"busy thread", Run{ID: "run-2", ThreadID: "th"}, ErrBusy},
			{"run id taken, new thread", Run{ID: "run-1", ThreadID: "other"}, ErrExists},
			{"no run id", Run{ThreadID: "th"}, ErrInvalid},
			{"no thread id", Run{ID: "run-3"}, ErrInvalid},
		}
		for _, tt := range tests {
			if _, err := beginRun(ctx, s, tt.run); !errors.Is(err, tt.err) {
				t.Errorf("%s: BeginRun = %v, want %v", tt.name, err, tt.err)
			}
		}
		if _, err := s.GetThread(ctx, "other"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a refused BeginRun left its new thread behind: %v", err)
		}

		must(t, s.FinishRun(ctx, "run-1", RunSuccess, "", nil, nil))
		if _, err := beginRun(ctx, s, Run{ID: "run-1", ThreadID: "th"}); !errors.Is(err, ErrExists) {
			t.Errorf("BeginRun with a used run id on an idle thread = %v, want ErrExists", err)
		}
		got, err := beginRun(ctx, s, Run{ID: "run-2", ThreadID: "th", Route: "/support/[tenant]"})
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("BeginRun on a thread with history:\n got %+v\nwant %+v", got, want)
		}
	})
}
