package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/store/dialect"
)

// abandonPG stops s as a crashed replica: no more renewals, no goodbye, and
// its lease made to have expired by the database's clock.
func abandonPG(t *testing.T, s *sharedDB) {
	t.Helper()
	s.stopHeartbeat()
	var pk int64
	must(t, s.d.(dialect.Peeker).Peek(context.Background(),
		`UPDATE owners SET expires_at = now() - interval '1 second' WHERE pk = $1 RETURNING pk`, []any{s.own.pk}, &pk))
}

// TestPostgresOneRunPerThreadAcrossStores: three stores on one database,
// as three replicas, start runs on the same threads at once, by StartRun
// and BeginRun (which also creates the thread): exactly one run per
// thread starts, and every other attempt gets ErrBusy.
func TestPostgresOneRunPerThreadAcrossStores(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	stores := []*sharedDB{openPostgresTest(t, dsn, Options{}), openPostgresTest(t, dsn, Options{}), openPostgresTest(t, dsn, Options{})}
	_, err := stores[0].CreateThread(ctx, "made", nil)
	must(t, err)
	for _, threadID := range []string{"made", "new"} {
		var wg sync.WaitGroup
		errs := make([]error, 30)
		for i := range errs {
			wg.Go(func() {
				r := Run{ID: fmt.Sprintf("%s-%d", threadID, i), ThreadID: threadID}
				if i%2 == 0 || threadID == "new" {
					_, errs[i] = beginRun(ctx, stores[i%3], r)
				} else {
					errs[i] = startRun(ctx, stores[i%3], r)
				}
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrBusy):
				t.Errorf("thread %s: start %d = %v, want nil or ErrBusy", threadID, i, err)
			}
		}
		if won != 1 {
			t.Errorf("thread %s: %d runs started, want exactly 1", threadID, won)
		}
	}
}

// TestPostgresRecoverOnlyExpiredOwners: a replica's recovery leaves the
// runs of a live replica alone, and takes those of one that stopped
// renewing only once its lease has expired; the dead replica's late write
// is refused.
func TestPostgresRecoverOnlyExpiredOwners(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	a := openPostgresTest(t, dsn, Options{Lease: time.Hour})
	b := openPostgresTest(t, dsn, Options{})
	newRun(t, a, "th", "run-a")
	must(t, a.SaveStep(ctx, sampleStep("th", "run-a", 1, 1)))
	n, err := b.RecoverInterrupted(ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("RecoverInterrupted with a live owner = %d, want 0", n)
	}
	// a stops renewing, but its hour-long lease has not run out.
	a.stopHeartbeat()
	if n, _ := b.RecoverInterrupted(ctx); n != 0 {
		t.Fatalf("RecoverInterrupted within the lease = %d, want 0", n)
	}
	if st := runStatusOf(t, b, "run-a"); st != RunRunning {
		t.Fatalf("run within its owner's lease is %s, want running", st)
	}
	abandonPG(t, a)
	n, err = b.RecoverInterrupted(ctx)
	must(t, err)
	if n != 1 {
		t.Fatalf("RecoverInterrupted after the lease = %d, want 1", n)
	}
	if st := runStatusOf(t, b, "run-a"); st != RunInterrupted {
		t.Errorf("run is %s, want interrupted", st)
	}
	th, err := b.GetThread(ctx, "th")
	must(t, err)
	if th.Status != StatusInterrupted {
		t.Errorf("thread is %s, want interrupted", th.Status)
	}
	cp, err := b.Latest(ctx, "th")
	must(t, err)
	if cp.Step != 1 {
		t.Errorf("checkpoint step %d after recovery, want the saved step 1", cp.Step)
	}
	if err := a.SaveStep(ctx, sampleStep("th", "run-a", 2, 4)); !errors.Is(err, ErrNotRunning) {
		t.Errorf("late SaveStep of the gone owner = %v, want ErrNotRunning", err)
	}
	must(t, startRun(ctx, b, Run{ID: "run-b", ThreadID: "th"}))
}

func runStatusOf(t *testing.T, s Store, runID string) string {
	t.Helper()
	r, err := s.GetRun(context.Background(), runID)
	must(t, err)
	return r.Status
}

// TestPostgresMigrateConcurrently opens several stores on a new database
// at once, as replicas starting together: each opens, and every migration
// is applied once.
func TestPostgresMigrateConcurrently(t *testing.T) {
	dsn := pgtest.Database(t)
	var wg sync.WaitGroup
	stores := make([]Store, 6)
	errs := make([]error, len(stores))
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = OpenWith(dsn, Options{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	list, err := os.ReadDir("postgres/migrations")
	must(t, err)
	if n := queryInt(t, stores[0], `SELECT count(*) FROM dawn_schema`); n != int64(len(list)) {
		t.Errorf("dawn_schema has %d rows, want %d (one per migration)", n, len(list))
	}
	if n := queryInt(t, stores[0], `SELECT count(*) FROM owners`); n != int64(len(stores)) {
		t.Errorf("%d owner rows, want %d", n, len(stores))
	}
}

// TestPostgresOpenErrors: a URL that does not parse and a database that
// does not answer fail with a message that names the host and never the
// password.
func TestPostgresOpenErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, tt := range []struct {
		dsn, want string
	}{
		{"postgres://ann:s3cret-pw@db.example:notaport/app", "db.example"},
		{"postgres://ann:s3cret-pw@" + closed + "/app?sslmode=disable&connect_timeout=5", closed},
	} {
		_, err := OpenWith(tt.dsn, Options{})
		if err == nil {
			t.Fatalf("OpenWith(%s) succeeded", Redact(tt.dsn))
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error prints the password: %v", err)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %q does not name %s", err, tt.want)
		}
	}
}

// TestPostgresNotifier: a payload published on one store reaches a
// subscriber of another, and a committed step wakes followers of its run.
func TestPostgresNotifier(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	a := openPostgresTest(t, dsn, Options{})
	b := openPostgresTest(t, dsn, Options{})
	signals, stop := b.Subscribe(ChannelSignals)
	defer stop()
	events, stopEvents := b.Subscribe(ChannelEvents)
	defer stopEvents()
	must(t, a.Publish(ctx, ChannelSignals, "cancel th"))
	if got := receive(t, signals); got != "cancel th" {
		t.Errorf("signal = %q", got)
	}
	newRun(t, a, "th", "run-1")
	must(t, a.SaveStep(ctx, sampleStep("th", "run-1", 1, 1)))
	if got := receive(t, events); got != "run-1" {
		t.Errorf("events wake-up = %q, want run-1", got)
	}
}

func receive(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no notification within 10s")
		return ""
	}
}
