package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

func TestStartRun(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := startRun(ctx, s, Run{ID: "r0", ThreadID: "missing"}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"missing"`) {
			t.Errorf("StartRun on a missing thread = %v, want ErrNotFound naming it", err)
		}
		newRun(t, s, "th", "r1")
		th, err := s.GetThread(ctx, "th")
		must(t, err)
		if th.Status != StatusBusy {
			t.Errorf("thread status = %q, want busy", th.Status)
		}
		if err := startRun(ctx, s, Run{ID: "r2", ThreadID: "th"}); !errors.Is(err, ErrBusy) {
			t.Errorf("second StartRun = %v, want ErrBusy", err)
		}
		must(t, s.FinishRun(ctx, "r1", RunSuccess, "", nil, nil))
		if err := startRun(ctx, s, Run{ID: "r1", ThreadID: "th"}); !errors.Is(err, ErrExists) {
			t.Errorf("StartRun with a used run id = %v, want ErrExists", err)
		}
		if err := startRun(ctx, s, Run{ThreadID: "th"}); !errors.Is(err, ErrInvalid) {
			t.Errorf("StartRun without an id = %v, want ErrInvalid", err)
		}
		r, err := s.GetRun(ctx, "r1")
		must(t, err)
		if r.ThreadID != "th" || r.Route != "/support/[tenant]" || r.Status != RunSuccess || r.CreatedAt.IsZero() {
			t.Errorf("GetRun = %+v", r)
		}
		if _, err := s.GetRun(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetRun(nope) = %v, want ErrNotFound", err)
		}
	})
}

// TestStartRunConcurrent starts 20 runs on one thread at once: exactly one
// may win, through one store and through two stores on the same file (as
// two processes would).
func TestStartRunConcurrent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dawn.db")
	tests := []struct {
		name   string
		stores func(t *testing.T) []*DB
	}{
		{"memory", func(t *testing.T) []*DB { return []*DB{openTest(t, ":memory:")} }},
		{"file", func(t *testing.T) []*DB { return []*DB{openTest(t, filepath.Join(t.TempDir(), "x.db"))} }},
		{"two stores one file", func(t *testing.T) []*DB { return []*DB{openTest(t, path), openTest(t, path)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stores := tt.stores(t)
			_, err := stores[0].CreateThread(ctx, "th", nil)
			must(t, err)
			var wg sync.WaitGroup
			errs := make([]error, 20)
			for i := range errs {
				wg.Go(func() {
					errs[i] = startRun(ctx, stores[i%len(stores)], Run{ID: fmt.Sprint("run-", i), ThreadID: "th"})
				})
			}
			wg.Wait()
			won := 0
			for i, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, ErrBusy):
					t.Errorf("StartRun %d = %v, want nil or ErrBusy", i, err)
				}
			}
			if won != 1 {
				t.Errorf("%d runs started, want exactly 1", won)
			}
		})
	}
}

func TestFinishRun(t *testing.T) {
	tests := []struct {
		status, errMsg string
		output         string
		thread         string
	}{
		{RunSuccess, "", `{"answer":"done"}`, StatusIdle},
		{RunCancelled, "", "", StatusIdle},
		{RunError, "model refused", `{"error":"model refused"}`, StatusError},
		{RunInterrupted, "stopped", "", StatusInterrupted},
	}
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.status, func(t *testing.T) {
				th, run := "th-"+tt.status, "run-"+tt.status
				newRun(t, s, th, run)
				done := []stream.Event{{ID: 1, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{}}`)}}
				must(t, s.FinishRun(ctx, run, tt.status, tt.errMsg, json.RawMessage(tt.output), done))

				r, err := s.GetRun(ctx, run)
				must(t, err)
				if r.Status != tt.status || r.Error != tt.errMsg || string(r.Output) != tt.output || !r.UpdatedAt.After(r.CreatedAt) {
					t.Errorf("run = %+v", r)
				}
				got, err := s.GetThread(ctx, th)
				must(t, err)
				if got.Status != tt.thread {
					t.Errorf("thread status = %q, want %q", got.Status, tt.thread)
				}
				evs, err := s.Events(ctx, run, 0)
				must(t, err)
				if len(evs) != 1 || evs[0].Type != stream.TypeDone {
					t.Errorf("events = %+v", evs)
				}
				if err := s.FinishRun(ctx, run, RunSuccess, "", nil, nil); !errors.Is(err, ErrNotRunning) {
					t.Errorf("second FinishRun = %v, want ErrNotRunning", err)
				}
				// The thread takes a new run whatever the last one did.
				must(t, startRun(ctx, s, Run{ID: run + "-again", ThreadID: th}))
			})
		}
		if err := s.FinishRun(ctx, "nope", RunSuccess, "", nil, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("FinishRun(nope) = %v, want ErrNotFound", err)
		}
		if err := s.FinishRun(ctx, "run-success-again", RunRunning, "", nil, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("FinishRun with status running = %v, want ErrInvalid", err)
		}
		if err := s.FinishRun(ctx, "run-success-again", RunSuccess, "", json.RawMessage(`{`), nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("FinishRun with broken output = %v, want ErrInvalid", err)
		}
	})
}

func TestRunsNewestFirst(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "th", "a")
		must(t, s.FinishRun(ctx, "a", RunSuccess, "", nil, nil))
		for _, id := range []string{"b", "c"} {
			must(t, startRun(ctx, s, Run{ID: id, ThreadID: "th", Metadata: json.RawMessage(`{"of":"` + id + `"}`)}))
			must(t, s.FinishRun(ctx, id, RunSuccess, "", nil, nil))
		}
		runs, err := s.Runs(ctx, "th")
		must(t, err)
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID+string(r.Metadata))
		}
		// A run keeps the metadata it was started with.
		if strings.Join(ids, ",") != `c{"of":"c"},b{"of":"b"},a` {
			t.Errorf("Runs = %v, want c,b,a with their metadata", ids)
		}
		_, err = s.CreateThread(ctx, "empty", nil)
		must(t, err)
		if runs, err := s.Runs(ctx, "empty"); err != nil || runs == nil || len(runs) != 0 {
			t.Errorf("Runs(empty) = %v, %v; want an empty list", runs, err)
		}
		if _, err := s.Runs(ctx, "missing"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Runs(missing) = %v, want ErrNotFound", err)
		}
	})
}

// TestRecoverInterrupted: the runs a store left running when it closed are
// recovered by the next store on the file.
func TestRecoverInterrupted(t *testing.T) {
	eachDurable(t, testRecoverInterrupted)
}

func testRecoverInterrupted(t *testing.T, open func() Store) {
	ctx := context.Background()
	{
		s := open()
		newRun(t, s, "cut-1", "r1")
		newRun(t, s, "cut-2", "r2")
		newRun(t, s, "done", "r3")
		must(t, s.FinishRun(ctx, "r3", RunSuccess, "", nil, nil))
		must(t, s.Close())
	}
	{
		s := open()
		n, err := s.RecoverInterrupted(ctx)
		must(t, err)
		if n != 2 {
			t.Errorf("RecoverInterrupted = %d, want 2", n)
		}
		for _, tt := range []struct{ thread, run, threadStatus, runStatus string }{
			{"cut-1", "r1", StatusInterrupted, RunInterrupted},
			{"cut-2", "r2", StatusInterrupted, RunInterrupted},
			{"done", "r3", StatusIdle, RunSuccess},
		} {
			th, err := s.GetThread(ctx, tt.thread)
			must(t, err)
			r, err := s.GetRun(ctx, tt.run)
			must(t, err)
			if th.Status != tt.threadStatus || r.Status != tt.runStatus {
				t.Errorf("%s: thread %s run %s, want %s and %s", tt.thread, th.Status, r.Status, tt.threadStatus, tt.runStatus)
			}
			if r.Status == RunInterrupted && !strings.Contains(r.Error, "server stopped") {
				t.Errorf("interrupted run error = %q", r.Error)
			}
		}
		if n, err := s.RecoverInterrupted(ctx); n != 0 || err != nil {
			t.Errorf("second RecoverInterrupted = %d, %v; want 0", n, err)
		}
		must(t, startRun(ctx, s, Run{ID: "r4", ThreadID: "cut-1"}))
	}
}

// TestBeginRunStampsThreadMetadata: a run's ThreadMetadata is set in the
// metadata of the thread it creates, and merged into an existing
// thread's, keeping its other members, in the transaction that begins
// the run; the same stamp again leaves it as it is, and one that is no
// JSON object is refused before anything is written.
func TestBeginRunStampsThreadMetadata(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		stamp := json.RawMessage(`{"graph_id":"agent","assistant_id":"a1"}`)
		_, err := beginRun(ctx, s, Run{ID: "r1", ThreadID: "fresh", Route: "/support/[tenant]", ThreadMetadata: stamp})
		must(t, err)
		th, err := s.GetThread(ctx, "fresh")
		must(t, err)
		if string(th.Metadata) != `{"assistant_id":"a1","graph_id":"agent"}` {
			t.Errorf("a thread the run created: metadata %s", th.Metadata)
		}

		_, err = s.CreateThread(ctx, "old", json.RawMessage(`{"name":"kept","assistant_id":"a0"}`))
		must(t, err)
		must(t, startRun(ctx, s, Run{ID: "r2", ThreadID: "old", Route: "/support/[tenant]", ThreadMetadata: stamp}))
		th, err = s.GetThread(ctx, "old")
		must(t, err)
		var meta map[string]string
		must(t, json.Unmarshal(th.Metadata, &meta))
		if meta["name"] != "kept" || meta["assistant_id"] != "a1" || meta["graph_id"] != "agent" || len(meta) != 3 {
			t.Errorf("an existing thread: metadata %s", th.Metadata)
		}
		must(t, s.FinishRun(ctx, "r2", RunSuccess, "", nil, nil))
		before := string(th.Metadata)
		must(t, startRun(ctx, s, Run{ID: "r3", ThreadID: "old", Route: "/support/[tenant]", ThreadMetadata: stamp}))
		if th, err = s.GetThread(ctx, "old"); err != nil || string(th.Metadata) != before {
			t.Errorf("the same stamp again: metadata %s, want %s unchanged (%v)", th.Metadata, before, err)
		}
		must(t, s.FinishRun(ctx, "r3", RunSuccess, "", nil, nil))

		err = startRun(ctx, s, Run{ID: "r4", ThreadID: "old", Route: "/support/[tenant]", ThreadMetadata: json.RawMessage(`["graph_id"]`)})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("a stamp that is no object: %v, want ErrInvalid", err)
		}
		if _, err := s.GetRun(ctx, "r4"); !errors.Is(err, ErrNotFound) {
			t.Errorf("the refused run was recorded: %v", err)
		}
	})
}

// TestRunAttrsKept: what a run's starter keeps with it comes back from
// GetRun and Runs on every store, and a value that is no JSON is refused.
func TestRunAttrsKept(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		attrs := json.RawMessage(`{"assistant_id":"a1","kwargs":{"stream_mode":["values"]}}`)
		_, err := beginRun(ctx, s, Run{ID: "r1", ThreadID: "t1", Route: "/support/[tenant]", Attrs: attrs})
		must(t, err)
		got, err := s.GetRun(ctx, "r1")
		must(t, err)
		if string(got.Attrs) != string(attrs) {
			t.Errorf("GetRun: attrs %s, want %s", got.Attrs, attrs)
		}
		must(t, s.FinishRun(ctx, "r1", RunSuccess, "", nil, nil))
		_, err = beginRun(ctx, s, Run{ID: "r2", ThreadID: "t1", Route: "/support/[tenant]"})
		must(t, err)
		runs, err := s.Runs(ctx, "t1")
		must(t, err)
		if len(runs) != 2 || runs[0].Attrs != nil || string(runs[1].Attrs) != string(attrs) {
			t.Errorf("Runs: %+v", runs)
		}
		if _, err := beginRun(ctx, s, Run{ID: "r3", ThreadID: "t2", Route: "/support/[tenant]", Attrs: json.RawMessage(`{`)}); !errors.Is(err, ErrInvalid) {
			t.Errorf("attrs that are no JSON: %v, want ErrInvalid", err)
		}
	})
}
