package crons

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/store"
)

// starts records the ticks a Scheduler starts.
type starts struct {
	mu   sync.Mutex
	seen []string
}

func (s *starts) StartCron(_ context.Context, c store.Cron) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, c.ID+"@"+c.NextRunAt.UTC().Format("15:04"))
	return nil
}

func (s *starts) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "dawn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func addCron(t *testing.T, st store.Store, id, schedule, tz string, from time.Time, end time.Time) {
	t.Helper()
	sched, err := Parse(schedule, tz, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateCron(context.Background(), store.Cron{ID: id, AssistantID: "/chat", Schedule: schedule, Timezone: tz,
		Payload: json.RawMessage(`{}`), NextRunAt: sched.Next(from), EndTime: end, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSchedulerFiresEachTickOnce walks a test clock: a tick fires when
// due and not before, once however many schedulers share the store,
// ticks missed while none ran fire once, a schedule follows its time
// zone, and a cron past its end time stops.
func TestSchedulerFiresEachTickOnce(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	day := time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC) // a Monday
	addCron(t, st, "five", "*/5 * * * *", "", day.Add(8*time.Hour+59*time.Minute), time.Time{})
	addCron(t, st, "ny", "0 9 * * *", "America/New_York", day, time.Time{})
	addCron(t, st, "ends", "*/5 * * * *", "", day.Add(8*time.Hour+59*time.Minute), day.Add(9*time.Hour+7*time.Minute))

	var clock time.Time
	rec := &starts{}
	a := New(st, rec, Options{Now: func() time.Time { return clock }})
	b := New(st, rec, Options{Now: func() time.Time { return clock }})
	steps := []struct {
		at   string
		want []string
	}{
		{"08:59", nil},
		{"09:00", []string{"five@09:00", "ends@09:00"}},
		{"09:01", nil},
		{"09:05", []string{"five@09:05", "ends@09:05"}},
		// 09:10 to 09:25 pass with no scheduler running: one run on
		// recovery, and "ends" has ended.
		{"09:27", []string{"five@09:10"}},
		{"09:29", nil},
		{"09:30", []string{"five@09:30"}},
		// 09:00 in New York is 14:00 UTC in January.
		{"14:00", []string{"five@09:35", "ny@14:00"}},
	}
	for _, s := range steps {
		hm, _ := time.Parse("15:04", s.at)
		clock = day.Add(time.Duration(hm.Hour())*time.Hour + time.Duration(hm.Minute())*time.Minute)
		before := len(rec.list())
		var wg sync.WaitGroup
		for _, sc := range []*Scheduler{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := sc.Fire(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		got := rec.list()[before:]
		if !sameSet(got, s.want) {
			t.Fatalf("at %s: started %v, want %v", s.at, got, s.want)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestSchedulerRunStops: Run, on a short interval and a seconds schedule
// (the test-only setting), fires on its own, and returns when the store
// closes.
func TestSchedulerRunStops(t *testing.T) {
	st := openStore(t)
	_, err := st.CreateCron(context.Background(), store.Cron{ID: "sec", AssistantID: "/chat", Schedule: "* * * * * *",
		Payload: json.RawMessage(`{}`), NextRunAt: time.Now(), Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := &starts{}
	done := make(chan struct{})
	go func() {
		New(st, rec, Options{Interval: 20 * time.Millisecond, Seconds: true}).Run(context.Background())
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.list()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(rec.list()); n < 2 {
		t.Fatalf("%d ticks fired in 10s of an every-second cron", n)
	}
	st.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run went on after the store closed")
	}
}

// TestParse: schedules and time zones that are not ones are refused with
// what to write instead.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		schedule, tz string
		seconds, ok  bool
	}{
		{"0 9 * * 1-5", "", false, true},
		{"@hourly", "Europe/Paris", false, true},
		{"*/5 * * * * *", "", false, false},
		{"*/5 * * * * *", "", true, true},
		{"61 * * * *", "", false, false},
		{"0 9 * * *", "Mars/Olympus", false, false},
		{"TZ=UTC 0 9 * * *", "", false, false},
		{"", "", false, false},
	} {
		_, err := Parse(c.schedule, c.tz, c.seconds)
		if (err == nil) != c.ok {
			t.Errorf("Parse(%q, %q, %v): %v", c.schedule, c.tz, c.seconds, err)
		}
	}
}

// TestSchedulerLogsEachTick: a tick this scheduler starts is logged once,
// naming the cron, its tick and its assistant, so an operator sees crons
// fire; a tick another scheduler won is not.
func TestSchedulerLogsEachTick(t *testing.T) {
	st := openStore(t)
	day := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	addCron(t, st, "five", "*/5 * * * *", "", day.Add(-time.Minute), time.Time{})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	clock := day
	a := New(st, &starts{}, Options{Now: func() time.Time { return clock }, Logger: logger})
	b := New(st, &starts{}, Options{Now: func() time.Time { return clock }, Logger: logger})
	for _, sc := range []*Scheduler{a, b} {
		if _, err := sc.Fire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	text := logs.String()
	if n := strings.Count(text, "cron tick started its run"); n != 1 || !strings.Contains(text, "cron=five") || !strings.Contains(text, "assistant=/chat") || !strings.Contains(text, "2030-01-07T09:00:00") {
		t.Fatalf("%d tick lines; the log:\n%s", n, text)
	}
}
