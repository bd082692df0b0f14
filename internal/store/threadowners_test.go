package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestThreadOwners: a thread keeps the owner it was created with (by
// CreateOwnedThread or by a run that creates it), searches and counts for
// a user hold only that user's threads, and a run for another user never
// adopts an existing thread.
func TestThreadOwners(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.CreateOwnedThread(ctx, "ann", "ann-1", nil)
		must(t, err)
		_, err = s.CreateOwnedThread(ctx, "bob", "bob-1", nil)
		must(t, err)
		_, err = s.CreateThread(ctx, "nobody", nil)
		must(t, err)
		// A run for ann creates her second thread.
		_, err = s.BeginRunChecked(ctx, Run{ID: "r-ann-2", ThreadID: "ann-2", Route: "/r", Owner: "ann"}, nil)
		must(t, err)

		for id, want := range map[string]string{"ann-1": "ann", "ann-2": "ann", "bob-1": "bob", "nobody": ""} {
			th, err := s.GetThread(ctx, id)
			must(t, err)
			if th.Owner != want {
				t.Errorf("thread %s: owner %q, want %q", id, th.Owner, want)
			}
		}

		for _, c := range []struct {
			owner string
			want  []string
		}{
			{"ann", []string{"ann-1", "ann-2"}},
			{"bob", []string{"bob-1"}},
			{"carol", []string{}},
			{"", []string{"ann-1", "ann-2", "bob-1", "nobody"}},
		} {
			got, err := s.SearchThreads(ctx, ThreadQuery{Owner: c.owner, Limit: 100})
			must(t, err)
			ids := threadIDs(got)
			slices.Sort(ids)
			if !slices.Equal(ids, c.want) {
				t.Errorf("search for %q: %v, want %v", c.owner, ids, c.want)
			}
			n, err := s.CountThreads(ctx, ThreadQuery{Owner: c.owner})
			must(t, err)
			if n != len(c.want) {
				t.Errorf("count for %q: %d, want %d", c.owner, n, len(c.want))
			}
		}

		// bob addresses ann's thread and the owner-less one: not found,
		// and nothing changes.
		for _, id := range []string{"ann-1", "nobody"} {
			_, err = s.BeginRunChecked(ctx, Run{ID: "r-bob-" + id, ThreadID: id, Route: "/r", Owner: "bob"}, nil)
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("bob's run on %s: %v, want ErrNotFound", id, err)
			}
			if _, err := s.GetRun(ctx, "r-bob-"+id); !errors.Is(err, ErrNotFound) {
				t.Errorf("bob's refused run on %s was recorded: %v", id, err)
			}
		}
		th, err := s.GetThread(ctx, "ann-1")
		must(t, err)
		if th.Owner != "ann" || th.Status != StatusIdle {
			t.Errorf("ann-1 after bob's attempt: owner %q status %q", th.Owner, th.Status)
		}
		// ann runs on her own thread; a run with no owner (the service,
		// or a server without authentication) runs on any.
		_, err = s.BeginRunChecked(ctx, Run{ID: "r-ann-1", ThreadID: "ann-1", Route: "/r", Owner: "ann"}, nil)
		must(t, err)
		_, err = s.BeginRunChecked(ctx, Run{ID: "r-svc", ThreadID: "bob-1", Route: "/r"}, nil)
		must(t, err)
		// An id is never handed to a second owner.
		if _, err := s.CreateOwnedThread(ctx, "bob", "ann-1", nil); !errors.Is(err, ErrExists) {
			t.Errorf("bob creating ann-1: %v, want ErrExists", err)
		}
	})
}

// TestCronOwners: a cron keeps its owner through updates, and searches
// and counts for a user hold only that user's crons.
func TestCronOwners(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		next := time.Now().Add(time.Hour)
		for _, c := range []Cron{
			{ID: "c-ann", AssistantID: "/a", Schedule: "* * * * *", Payload: []byte(`{}`), NextRunAt: next, Enabled: true, Owner: "ann"},
			{ID: "c-bob", AssistantID: "/a", Schedule: "* * * * *", Payload: []byte(`{}`), NextRunAt: next, Enabled: true, Owner: "bob"},
		} {
			_, err := s.CreateCron(ctx, c)
			must(t, err)
		}
		_, err := s.UpdateCron(ctx, "c-ann", func(c *Cron) error { c.Schedule = "*/5 * * * *"; c.Owner = "bob"; return nil })
		must(t, err)
		for _, c := range []struct {
			owner string
			want  []string
		}{{"ann", []string{"c-ann"}}, {"bob", []string{"c-bob"}}, {"", []string{"c-ann", "c-bob"}}} {
			got, err := s.SearchCrons(ctx, CronQuery{Owner: c.owner, Limit: 100})
			must(t, err)
			var ids []string
			for _, cr := range got {
				ids = append(ids, cr.ID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, c.want) {
				t.Errorf("crons for %q: %v, want %v", c.owner, ids, c.want)
			}
			n, err := s.CountCrons(ctx, CronQuery{Owner: c.owner})
			must(t, err)
			if n != len(c.want) {
				t.Errorf("cron count for %q: %d, want %d", c.owner, n, len(c.want))
			}
		}
	})
}
