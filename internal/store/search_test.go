package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

func threadIDs(ts []Thread) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func TestSearchThreads(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, c := range []struct{ id, meta string }{
			{"a", `{"user":"ann","n":1}`},
			{"b", `{"user":"bob","tags":["x"]}`},
			{"c", `{"user":"ann","n":2}`},
			{"d", ``},
		} {
			_, err := s.CreateThread(ctx, c.id, json.RawMessage(c.meta))
			must(t, err)
		}
		must(t, s.SaveValues(ctx, "c", 1, thread.State{"ticket_id": json.RawMessage(`"T-1"`)}))
		newRunOn(t, s, "d", "run-d") // d is busy

		tests := []struct {
			name string
			q    ThreadQuery
			want []string
		}{
			{"all, newest update first", ThreadQuery{}, []string{"d", "c", "b", "a"}},
			{"oldest first", ThreadQuery{SortBy: "created_at", SortOrder: "asc"}, []string{"a", "b", "c", "d"}},
			{"by id", ThreadQuery{SortBy: "thread_id", SortOrder: "asc"}, []string{"a", "b", "c", "d"}},
			{"metadata string", ThreadQuery{Metadata: json.RawMessage(`{"user":"ann"}`), SortBy: "thread_id", SortOrder: "asc"}, []string{"a", "c"}},
			{"metadata two keys", ThreadQuery{Metadata: json.RawMessage(`{"user":"ann","n":2}`)}, []string{"c"}},
			{"metadata array", ThreadQuery{Metadata: json.RawMessage(`{"tags":["x"]}`)}, []string{"b"}},
			{"metadata no match", ThreadQuery{Metadata: json.RawMessage(`{"user":"zed"}`)}, []string{}},
			{"values", ThreadQuery{Values: json.RawMessage(`{"ticket_id":"T-1"}`)}, []string{"c"}},
			{"status", ThreadQuery{Status: StatusBusy}, []string{"d"}},
			{"ids", ThreadQuery{IDs: []string{"a", "b", "zz"}, SortBy: "thread_id", SortOrder: "asc"}, []string{"a", "b"}},
			{"page", ThreadQuery{SortBy: "thread_id", SortOrder: "asc", Limit: 2, Offset: 1}, []string{"b", "c"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.SearchThreads(ctx, tt.q)
				must(t, err)
				if ids := threadIDs(got); !slices.Equal(ids, tt.want) {
					t.Errorf("SearchThreads = %v, want %v", ids, tt.want)
				}
				n, err := s.CountThreads(ctx, ThreadQuery{IDs: tt.q.IDs, Metadata: tt.q.Metadata, Values: tt.q.Values, Status: tt.q.Status})
				must(t, err)
				if tt.q.Limit == 0 && n != len(tt.want) {
					t.Errorf("CountThreads = %d, want %d", n, len(tt.want))
				}
			})
		}
	})
}

func TestSearchThreadsRefusesBadQueries(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		for _, tt := range []struct {
			q    ThreadQuery
			name string
		}{
			{ThreadQuery{SortBy: "pk; DROP TABLE threads"}, "sort_by"},
			{ThreadQuery{SortOrder: "sideways"}, "sort_order"},
			{ThreadQuery{Metadata: json.RawMessage(`[1]`)}, "metadata"},
			{ThreadQuery{Values: json.RawMessage(`{"a\"b":1}`)}, "values"},
		} {
			_, err := s.SearchThreads(context.Background(), tt.q)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.name) {
				t.Errorf("SearchThreads(%+v) = %v, want ErrInvalid naming %s", tt.q, err, tt.name)
			}
			if tt.name == "sort_by" || tt.name == "sort_order" {
				continue // CountThreads ignores the sort
			}
			if _, err := s.CountThreads(context.Background(), tt.q); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.name) {
				t.Errorf("CountThreads(%+v) = %v, want ErrInvalid naming %s", tt.q, err, tt.name)
			}
		}
	})
}

// TestSearchThreadsOddValues searches threads whose metadata holds values
// a database may handle apart: null, numbers written two ways, and the
// escaped character U+0000, which Postgres cannot hold in jsonb and which
// must not break the search of other threads.
func TestSearchThreadsOddValues(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, c := range []struct{ id, meta string }{
			{"a", `{"user":"ann","n":1,"note":"x\u0000y"}`},
			{"b", `{"user":"bob","n":1.5,"gone":null}`},
			{"c", `{"user":"cy","n":10}`},
		} {
			_, err := s.CreateThread(ctx, c.id, json.RawMessage(c.meta))
			must(t, err)
		}
		for _, tt := range []struct {
			filter string
			want   []string
		}{
			{`{"user":"ann"}`, []string{"a"}},
			{`{"n":1.0}`, []string{"a"}},
			{`{"n":15e-1}`, []string{"b"}},
			{`{"gone":null}`, []string{"a", "b", "c"}}, // null or missing
			{`{"user":"bob","gone":null}`, []string{"b"}},
			{`{"note":"x\u0000y"}`, []string{"a"}},
			{`{"note":"x"}`, []string{}},
		} {
			got, err := s.SearchThreads(ctx, ThreadQuery{Metadata: json.RawMessage(tt.filter), SortBy: "thread_id", SortOrder: "asc"})
			must(t, err)
			if ids := threadIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("SearchThreads(%s) = %v, want %v", tt.filter, ids, tt.want)
			}
			n, err := s.CountThreads(ctx, ThreadQuery{Metadata: json.RawMessage(tt.filter)})
			must(t, err)
			if n != len(tt.want) {
				t.Errorf("CountThreads(%s) = %d, want %d", tt.filter, n, len(tt.want))
			}
		}
	})
}

// newRunOn starts a run on an existing thread.
func newRunOn(t testing.TB, s Store, threadID, runID string) {
	t.Helper()
	must(t, startRun(context.Background(), s, Run{ID: runID, ThreadID: threadID, Route: "/support/[tenant]"}))
}

func TestFinishedRuns(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.CreateThread(ctx, "t", nil)
		must(t, err)
		// Three runs: the first and third succeed, the second fails; a
		// fourth, a plan preview, succeeds without changing the state.
		step := 0
		for i, status := range []string{RunSuccess, RunError, RunSuccess} {
			id := fmt.Sprintf("run-%d", i+1)
			newRunOn(t, s, "t", id)
			step++
			st := sampleStep("t", id, step, 1)
			done := stream.Event{ID: 4, Type: stream.TypeDone, Data: json.RawMessage(fmt.Sprintf(`{"output":{"messages":[],"n":%d}}`, i+1))}
			switch {
			case status == RunError:
				done.Data = json.RawMessage(`{"output":{"error":"boom"}}`)
			case i == 0: // big enough to be stored compressed
				done.Data = json.RawMessage(`{"output":{"messages":[],"n":1,"pad":"` + strings.Repeat("x", 2000) + `"}}`)
			}
			st.Events = append(st.Events, done)
			st.Finish = &Finish{Status: status, Error: map[bool]string{true: "boom"}[status == RunError]}
			must(t, s.SaveStep(ctx, st))
		}
		newRunOn(t, s, "t", "preview")
		must(t, s.FinishRun(ctx, "preview", RunSuccess, "", json.RawMessage(`{"preview":{"plan":[]}}`),
			[]stream.Event{{ID: 1, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{"preview":{"plan":[]}}}`)}}))
		newRunOn(t, s, "t", "preview-2")
		must(t, s.FinishRun(ctx, "preview-2", RunSuccess, "", json.RawMessage("\n {\"preview\": {\"plan\": []}}"),
			[]stream.Event{{ID: 1, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{"preview":{"plan":[]}}}`)}}))
		// A run whose output holds \u0000, which Postgres cannot hold as
		// jsonb, on another thread: it must not break the query.
		_, err = s.CreateThread(ctx, "odd", nil)
		must(t, err)
		newRunOn(t, s, "odd", "odd-1")
		must(t, s.FinishRun(ctx, "odd-1", RunSuccess, "", json.RawMessage(`{"answer":"a\u0000b","preview":null}`),
			[]stream.Event{{ID: 1, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{"answer":"a\u0000b"}}`)}}))
		odd, err := s.FinishedRuns(ctx, FinishedQuery{ThreadID: "odd", Done: true})
		must(t, err)
		if len(odd) != 1 || string(odd[0].Done) != `{"output":{"answer":"a\u0000b"}}` {
			t.Errorf("FinishedRuns(odd) = %+v, want odd-1 with its done event", odd)
		}
		got, err := s.FinishedRuns(ctx, FinishedQuery{ThreadID: "t", Done: true})
		must(t, err)
		if len(got) != 2 || got[0].ID != "run-3" || got[1].ID != "run-1" {
			t.Fatalf("FinishedRuns = %+v, want run-3 then run-1", got)
		}
		if string(got[0].Done) != `{"output":{"messages":[],"n":3}}` || got[0].Route != "/support/[tenant]" || got[0].UpdatedAt.IsZero() {
			t.Errorf("run-3 = %+v", got[0])
		}
		before, err := s.FinishedRuns(ctx, FinishedQuery{ThreadID: "t", Before: "run-3"})
		must(t, err)
		if len(before) != 1 || before[0].ID != "run-1" || before[0].Done != nil {
			t.Errorf("before run-3 = %+v, want run-1 without its done event", before)
		}
		one, err := s.FinishedRuns(ctx, FinishedQuery{ThreadID: "t", RunID: "run-1", Done: true})
		must(t, err)
		if len(one) != 1 || string(one[0].Done) != `{"output":{"messages":[],"n":1,"pad":"`+strings.Repeat("x", 2000)+`"}}` {
			t.Errorf("run-1 = %+v", one)
		}
		limited, err := s.FinishedRuns(ctx, FinishedQuery{ThreadID: "t", Limit: 1})
		must(t, err)
		if len(limited) != 1 || limited[0].ID != "run-3" {
			t.Errorf("limit 1 = %+v", limited)
		}
		if _, err := s.FinishedRuns(ctx, FinishedQuery{ThreadID: "nope"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown thread: %v, want ErrNotFound", err)
		}
	})
}
