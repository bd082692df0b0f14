package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/stream"
)

// TestEventsPage: a run's log read a page at a time gives every event once,
// in order, and the same events as one read of it all.
func TestEventsPage(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "th", "run")
		for step := 1; step <= 4; step++ {
			must(t, s.SaveStep(ctx, sampleStep("th", "run", step, int64(step-1)*3+1)))
		}
		all, err := s.Events(ctx, "run", 0)
		must(t, err)
		if len(all) != 12 {
			t.Fatalf("Events = %d events, want 12", len(all))
		}
		var paged []stream.Event
		for after := int64(0); ; {
			page, err := s.EventsPage(ctx, "run", after, 5)
			must(t, err)
			if len(page) > 5 {
				t.Fatalf("EventsPage(after %d, limit 5) = %d events", after, len(page))
			}
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			after = page[len(page)-1].ID
		}
		if len(paged) != len(all) {
			t.Fatalf("paged read gave %d events, want %d", len(paged), len(all))
		}
		for i := range all {
			if paged[i].ID != all[i].ID || paged[i].Type != all[i].Type || string(paged[i].Data) != string(all[i].Data) {
				t.Fatalf("paged event %d = %+v, want %+v", i, paged[i], all[i])
			}
		}
		if page, err := s.EventsPage(ctx, "run", 10, 0); err != nil || len(page) != 2 {
			t.Errorf("EventsPage(after 10, no limit) = %d events, %v; want 2", len(page), err)
		}
		if _, err := s.EventsPage(ctx, "nope", 0, 5); !errors.Is(err, ErrNotFound) {
			t.Errorf("EventsPage of an unknown run = %v, want ErrNotFound", err)
		}
	})
}

// TestPostgresUnavailable: with the link to the database cut, every call
// fails with ErrUnavailable (the driver's error kept for the log), and
// works again once the link is back.
func TestPostgresUnavailable(t *testing.T) {
	ctx := context.Background()
	proxy, dsn := pgtest.NewProxy(t, pgtest.Database(t))
	s := openPostgresTest(t, dsn, Options{})
	newRun(t, s, "th", "run")
	proxy.Cut()
	calls := map[string]func() error{
		"GetThread":    func() error { _, err := s.GetThread(ctx, "th"); return err },
		"CreateThread": func() error { _, err := s.CreateThread(ctx, "other", nil); return err },
		"Events":       func() error { _, err := s.EventsPage(ctx, "run", 0, 10); return err },
		"Latest":       func() error { _, err := s.Latest(ctx, "th"); return err },
		"SaveStep":     func() error { return s.SaveStep(ctx, sampleStep("th", "run", 1, 1)) },
		"BeginRun":     func() error { _, err := beginRun(ctx, s, Run{ID: "run2", ThreadID: "t2"}); return err },
		"SearchThreads": func() error {
			_, err := s.SearchThreads(ctx, ThreadQuery{Limit: 10})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s with the link cut = %v, want ErrUnavailable", name, err)
		}
	}
	proxy.Restore()
	if _, err := s.GetThread(ctx, "th"); err != nil {
		t.Fatalf("GetThread after the link is back = %v", err)
	}
	must(t, s.SaveStep(ctx, sampleStep("th", "run", 1, 1)))
}

// TestPostgresOutageSparesLiveRuns: two stores (replicas) each reach the
// database through a proxy; both links are cut for longer than the lease.
// The first store back must not take the other's runs for gone while the
// other has not had a lease term to renew; the run then saves its next
// step. A store that stays cut off is still judged gone a lease after.
func TestPostgresOutageSparesLiveRuns(t *testing.T) {
	ctx := context.Background()
	const lease = time.Second
	db := pgtest.Database(t)
	pa, dsnA := pgtest.NewProxy(t, db)
	pb, dsnB := pgtest.NewProxy(t, db)
	a := openPostgresTest(t, dsnA, Options{Lease: lease})
	b := openPostgresTest(t, dsnB, Options{Lease: lease})
	newRun(t, b, "th", "run")
	must(t, b.SaveStep(ctx, sampleStep("th", "run", 1, 1)))

	pa.Cut()
	pb.Cut()
	time.Sleep(3 * lease)
	pa.Restore() // a is back first, b a moment later
	n := recoverWhenBack(t, a)
	if n != 0 {
		t.Fatalf("the first store back marked %d runs interrupted, want 0: the other had no lease term to renew", n)
	}
	pb.Restore()
	time.Sleep(lease + lease/2) // a has been back a lease term; b has renewed
	if n, err := a.RecoverInterrupted(ctx); err != nil || n != 0 {
		t.Fatalf("RecoverInterrupted a lease after the outage = %d, %v; want 0 (b renews again)", n, err)
	}
	if err := b.SaveStep(ctx, sampleStep("th", "run", 2, 4)); err != nil {
		t.Fatalf("the run's next step after the outage: %v", err)
	}
	if st := runStatusOf(t, a, "run"); st != RunRunning {
		t.Fatalf("run is %s after the outage, want running", st)
	}

	// b alone cut off: now its lease running out does mean it is gone,
	// as far as anyone can tell.
	pb.Cut()
	deadline := time.Now().Add(10 * lease)
	for runStatusOf(t, a, "run") == RunRunning {
		if time.Now().After(deadline) {
			t.Fatal("the run of a store cut off alone was not recovered within 10 leases")
		}
		if _, err := a.RecoverInterrupted(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(lease / 4)
	}
}

// recoverWhenBack calls s.RecoverInterrupted until its database answers.
func recoverWhenBack(t *testing.T, s Store) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := s.RecoverInterrupted(context.Background())
		if err == nil {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("RecoverInterrupted after the link came back: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestContact: the rules of judging leases after a gap in contact.
func TestContact(t *testing.T) {
	const lease = 30 * time.Second
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name     string
		renewals []time.Duration // after t0
		at       time.Duration
		want     bool
	}{
		{"at start", nil, 0, true},
		{"steady beats", []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}, 31 * time.Second, true},
		{"no renewal for long", nil, 20 * time.Second, false},
		{"just back", []time.Duration{2 * time.Minute}, 2 * time.Minute, false},
		{"back, not a lease yet", []time.Duration{2 * time.Minute, 2*time.Minute + 10*time.Second, 2*time.Minute + 20*time.Second}, 2*time.Minute + 20*time.Second, false},
		{"back a lease", []time.Duration{2 * time.Minute, 2*time.Minute + 10*time.Second, 2*time.Minute + 20*time.Second, 2*time.Minute + 30*time.Second}, 2*time.Minute + 30*time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newContact(lease, t0)
			for _, d := range tt.renewals {
				c.renewed(t0.Add(d))
			}
			if got := c.mayJudge(t0.Add(tt.at)); got != tt.want {
				t.Errorf("mayJudge = %v, want %v", got, tt.want)
			}
		})
	}
}
