package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// abandon stops s as a crash would: no more lease renewals and no goodbye,
// so its owner row stays behind with the lease it last renewed.
func abandon(t *testing.T, s *DB) {
	t.Helper()
	s.stopHeartbeat()
	s.closed.Store(true)
	must(t, s.d.Close())
}

// ownerRows returns how many owner rows the store holds.
func ownerRows(t *testing.T, s *DB) int {
	t.Helper()
	return int(queryInt(t, s, `SELECT count(*) FROM owners`))
}

// setClock sets the clock s judges leases by; f stands for time.Now.
func setClock(s *DB, f func() time.Time) {
	s.leaseTime.Store(&f)
}

func runStatus(t *testing.T, s *DB, runID string) string {
	t.Helper()
	r, err := s.GetRun(context.Background(), runID)
	must(t, err)
	return r.Status
}

// TestRecoverSparesLiveOwner opens two stores on one file, as two servers
// would: the second one's start-up recovery must leave the first one's run
// alone, and the first one must still be able to finish it.
func TestRecoverSparesLiveOwner(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dawn.db")
	a := openTest(t, path)
	newRun(t, a, "th", "run-a")
	b := openTest(t, path)
	n, err := b.RecoverInterrupted(ctx)
	must(t, err)
	if n != 0 {
		t.Errorf("RecoverInterrupted on the second store = %d, want 0: the first store is alive", n)
	}
	if st := runStatus(t, b, "run-a"); st != RunRunning {
		t.Errorf("run of the live store is %s, want running", st)
	}
	must(t, a.SaveStep(ctx, sampleStep("th", "run-a", 1, 1)))
	must(t, a.FinishRun(ctx, "run-a", RunSuccess, "", []byte(`{"answer":"ok"}`), nil))
	if st := runStatus(t, b, "run-a"); st != RunSuccess {
		t.Errorf("run is %s after the first store finished it, want success", st)
	}
	// Neither store recovers its own runs either.
	newRun(t, a, "th-2", "run-a2")
	if n, err := a.RecoverInterrupted(ctx); n != 0 || err != nil {
		t.Errorf("RecoverInterrupted on the run's own store = %d, %v; want 0", n, err)
	}
}

// TestRecoverAfterLeaseExpires: the runs of a store that stopped renewing
// its lease (as a crashed process on another machine would) are recovered
// once the lease has expired, and not before. The pid check cannot help
// here: the abandoned store's process, this one, is alive.
func TestRecoverAfterLeaseExpires(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dawn.db")
	st, err := OpenWith(path, Options{Lease: time.Minute})
	must(t, err)
	a := st.(*DB)
	newRun(t, a, "th", "run-a")
	b := openTest(t, path)
	abandon(t, a)

	start := time.Now()
	for _, tt := range []struct {
		after time.Duration // how far b's clock is ahead
		want  int
	}{
		{0, 0},
		{45 * time.Second, 0}, // past the default lease, within a's
		{2 * time.Minute, 1},
	} {
		setClock(b, func() time.Time { return start.Add(tt.after) })
		n, err := b.RecoverInterrupted(ctx)
		must(t, err)
		if n != tt.want {
			t.Errorf("RecoverInterrupted %v after a stopped renewing = %d, want %d", tt.after, n, tt.want)
		}
	}
	if st := runStatus(t, b, "run-a"); st != RunInterrupted {
		t.Errorf("run of the expired store is %s, want interrupted", st)
	}
	if n := ownerRows(t, b); n != 1 {
		t.Errorf("%d owner rows after the recovery, want 1 (the expired one is removed)", n)
	}
	must(t, startRun(ctx, b, Run{ID: "run-b", ThreadID: "th"}))
}

// TestLeaseLostThenRegained: a store that another declared gone (its
// process was paused past its lease) registers again before its next run,
// so that run is not taken for an orphan.
func TestLeaseLostThenRegained(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dawn.db")
	a := openTest(t, path)
	newRun(t, a, "th", "run-a")
	b := openTest(t, path)
	later := func() time.Time { return time.Now().Add(time.Hour) }
	setClock(b, later) // an hour on, a renewed nothing
	n, err := b.RecoverInterrupted(ctx)
	must(t, err)
	if n != 1 {
		t.Fatalf("RecoverInterrupted with a's lease expired = %d, want 1", n)
	}
	setClock(a, later) // a wakes up
	newRun(t, a, "th-2", "run-a2")
	if n, err := b.RecoverInterrupted(ctx); n != 0 || err != nil {
		t.Errorf("RecoverInterrupted after a registered again = %d, %v; want 0", n, err)
	}
	if st := runStatus(t, a, "run-a2"); st != RunRunning {
		t.Errorf("run started after the lease was regained is %s, want running", st)
	}
}

// TestHeartbeatRenewsLease: a live store keeps pushing its lease forward.
func TestHeartbeatRenewsLease(t *testing.T) {
	st, err := OpenWith(filepath.Join(t.TempDir(), "dawn.db"), Options{Lease: 30 * time.Millisecond})
	must(t, err)
	s := st.(*DB)
	t.Cleanup(func() { _ = s.Close() })
	expires := func() int64 {
		return queryInt(t, s, `SELECT expires_at FROM owners`)
	}
	first := expires()
	deadline := time.Now().Add(10 * time.Second)
	for expires() == first {
		if time.Now().After(deadline) {
			t.Fatal("the lease was not renewed within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCloseReleasesRuns: a store closed with a run still marked running
// leaves no owner behind, so the next recovery takes the run at once.
func TestCloseReleasesRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dawn.db")
	a := openTest(t, path)
	b := openTest(t, path)
	newRun(t, a, "th", "run-a")
	must(t, a.Close())
	if n := ownerRows(t, b); n != 1 {
		t.Errorf("%d owner rows after a closed, want 1", n)
	}
	n, err := b.RecoverInterrupted(ctx)
	must(t, err)
	if n != 1 {
		t.Errorf("RecoverInterrupted after the owner closed = %d, want 1", n)
	}
}
