package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// TestCronsKeep: a cron is created, found by search and count (by
// assistant, by thread, by enabled), changed, due at its tick and
// deleted; a taken id and an unknown one are refused.
func TestCronsKeep(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		tick := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
		a := Cron{ID: "c1", AssistantID: "/chat", Schedule: "0 9 * * *", Timezone: "Europe/Paris",
			OnRunCompleted: "keep", Payload: json.RawMessage(`{"input":{"messages":[]}}`), NextRunAt: tick, Enabled: true}
		b := Cron{ID: "c2", AssistantID: "/other", ThreadID: "t1", Schedule: "*/5 * * * *",
			Payload: json.RawMessage(`{}`), Metadata: json.RawMessage(`{"k": 1}`), NextRunAt: tick.Add(time.Hour), Enabled: false}
		for _, c := range []Cron{a, b} {
			if _, err := s.CreateCron(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CreateCron(ctx, a); !errors.Is(err, ErrExists) {
			t.Fatalf("a second cron c1: %v, want ErrExists", err)
		}
		all, err := s.SearchCrons(ctx, CronQuery{})
		must(t, err)
		if len(all) != 2 || all[0].ID != "c1" || all[0].Timezone != "Europe/Paris" || !all[0].NextRunAt.Equal(tick) || string(all[1].Metadata) != `{"k":1}` || all[1].ThreadID != "t1" {
			t.Fatalf("search all: %+v", all)
		}
		off := false
		for _, c := range []struct {
			q    CronQuery
			want int
		}{{CronQuery{AssistantID: "/chat"}, 1}, {CronQuery{ThreadID: "t1"}, 1}, {CronQuery{Enabled: &off}, 1}, {CronQuery{AssistantID: "/none"}, 0}} {
			n, err := s.CountCrons(ctx, c.q)
			must(t, err)
			if n != c.want {
				t.Errorf("count %+v = %d, want %d", c.q, n, c.want)
			}
		}
		due, err := s.DueCrons(ctx, tick.Add(2*time.Hour), 10)
		must(t, err)
		if len(due) != 1 || due[0].ID != "c1" {
			t.Fatalf("due crons (c2 is disabled): %+v", due)
		}
		got, err := s.UpdateCron(ctx, "c2", func(c *Cron) error { c.Enabled, c.Schedule = true, "0 * * * *"; return nil })
		must(t, err)
		if !got.Enabled || got.Schedule != "0 * * * *" || got.ThreadID != "t1" {
			t.Fatalf("updated: %+v", got)
		}
		if due, _ = s.DueCrons(ctx, tick.Add(2*time.Hour), 10); len(due) != 2 {
			t.Fatalf("due after enabling c2: %+v", due)
		}
		if _, err := s.UpdateCron(ctx, "nope", func(*Cron) error { return nil }); !errors.Is(err, ErrNotFound) {
			t.Fatalf("update of an unknown cron: %v", err)
		}
		must(t, s.DeleteCron(ctx, "c1"))
		if err := s.DeleteCron(ctx, "c1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if n, _ := s.CountCrons(ctx, CronQuery{}); n != 1 {
			t.Fatalf("%d crons after delete, want 1", n)
		}
	})
}

// TestCronTickClaimedOnce: goroutines in two stores on one database claim
// the same tick at once; exactly one wins, and the cron's next tick is
// the winner's.
func TestCronTickClaimedOnce(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "dawn.db")
		claimRace(t, openTest(t, path), openTest(t, path))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Database(t)
		claimRace(t, openPostgresTest(t, dsn, Options{}), openPostgresTest(t, dsn, Options{}))
	})
}

func claimRace(t *testing.T, a, b Store) {
	ctx := context.Background()
	tick := time.Now().Add(-time.Second).UTC().Truncate(time.Second)
	_, err := a.CreateCron(ctx, Cron{ID: "race", AssistantID: "/chat", Schedule: "* * * * *", Payload: json.RawMessage(`{}`), NextRunAt: tick, Enabled: true})
	must(t, err)
	for round := range 20 {
		at := tick.Add(time.Duration(round) * time.Minute)
		next := at.Add(time.Minute)
		var wins sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 4 {
			s := []Store{a, b}[i%2]
			wins.Add(1)
			go func() {
				defer wins.Done()
				ok, err := s.ClaimCronTick(ctx, "race", at, next)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}()
		}
		wins.Wait()
		if won != 1 {
			t.Fatalf("tick %d: %d claims won, want exactly 1", round, won)
		}
	}
	got, err := b.SearchCrons(ctx, CronQuery{})
	must(t, err)
	if len(got) != 1 || !got[0].NextRunAt.Equal(tick.Add(20*time.Minute)) {
		t.Fatalf("after 20 ticks: %+v", got)
	}
}
