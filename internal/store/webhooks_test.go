package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// hookOf is the delivery a run's end asks for.
func hookOf(runID string) *Webhook {
	return &Webhook{URL: "https://hooks.example.com/" + runID, Payload: []byte(`{"run_id":"` + runID + `","status":"success"}`), MaxAttempts: 3}
}

// endWithHook starts a run on a new thread and ends it with a webhook.
func endWithHook(t testing.TB, s Store, threadID, runID string) {
	t.Helper()
	newRun(t, s, threadID, runID)
	must(t, s.EndRun(context.Background(), runID, Finish{Status: RunSuccess, Output: []byte(`{}`), Webhook: hookOf(runID)}, nil))
}

// claimIDs claims due deliveries on s and returns their run ids.
func claimIDs(t *testing.T, s Store, hold time.Duration) []string {
	t.Helper()
	ws, err := s.ClaimWebhooks(context.Background(), 100, hold)
	must(t, err)
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.RunID)
	}
	return ids
}

// TestWebhookRecordedWithRunEnd: a run's webhook delivery lands in the
// outbox with the end of the run, by FinishRun's way and by the last
// step's, pending and due; a run without one has none, and a delivery
// the outbox could not send fails the end and leaves the run running.
func TestWebhookRecordedWithRunEnd(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		endWithHook(t, s, "th", "r1")
		w, err := s.GetWebhook(ctx, "r1")
		must(t, err)
		if w.Status != WebhookPending || w.ThreadID != "th" || w.URL != hookOf("r1").URL || w.Attempts != 0 || w.MaxAttempts != 3 ||
			string(w.Payload) != string(hookOf("r1").Payload) || w.NextAt.IsZero() {
			t.Fatalf("delivery after the run ended: %+v", w)
		}

		newRun(t, s, "th2", "r2")
		st := sampleStep("th2", "r2", 1, 1)
		st.Finish = &Finish{Status: RunInterrupted, Output: []byte(`{}`), Webhook: hookOf("r2")}
		must(t, s.SaveStep(ctx, st))
		if w, err := s.GetWebhook(ctx, "r2"); err != nil || w.Status != WebhookPending {
			t.Fatalf("delivery after the last step ended the run: %+v %v", w, err)
		}

		newRun(t, s, "th3", "r3")
		must(t, s.FinishRun(ctx, "r3", RunSuccess, "", nil, nil))
		if _, err := s.GetWebhook(ctx, "r3"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a run without a webhook has a delivery: %v", err)
		}

		newRun(t, s, "th4", "r4")
		bad := Finish{Status: RunSuccess, Webhook: &Webhook{URL: "https://x", Payload: []byte(`{`), MaxAttempts: 1}}
		if err := s.EndRun(ctx, "r4", bad, nil); !errors.Is(err, ErrInvalid) {
			t.Fatalf("EndRun with a broken payload: %v", err)
		}
		if r, _ := s.GetRun(ctx, "r4"); r.Status != RunRunning {
			t.Fatalf("the run ended (%s) although its delivery was refused", r.Status)
		}
	})
}

// TestWebhookClaimDue: a due delivery is claimed once; the outcome of an
// attempt makes it due again at the time it names, and an ended one is
// never claimed again and reads as it ended.
func TestWebhookClaimDue(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if ids := claimIDs(t, s, time.Minute); len(ids) != 0 {
			t.Fatalf("claimed %v from an empty outbox", ids)
		}
		endWithHook(t, s, "th", "r1")
		if ids := claimIDs(t, s, time.Minute); len(ids) != 1 || ids[0] != "r1" {
			t.Fatalf("first claim = %v, want [r1]", ids)
		}
		if ids := claimIDs(t, s, time.Minute); len(ids) != 0 {
			t.Fatalf("a claimed delivery was claimed again: %v", ids)
		}
		must(t, s.RecordWebhookAttempt(ctx, "r1", WebhookAttempt{Attempt: 1, Code: 503, Error: "the receiver answered 503", Status: WebhookPending, Next: time.Now().Add(time.Hour)}))
		if ids := claimIDs(t, s, time.Minute); len(ids) != 0 {
			t.Fatalf("a delivery due in an hour was claimed: %v", ids)
		}
		if err := s.RecordWebhookAttempt(ctx, "r1", WebhookAttempt{Attempt: 2, Status: WebhookDelivered}); !errors.Is(err, ErrNotClaimed) {
			t.Fatalf("recording an attempt at an unclaimed delivery: %v", err)
		}
		w, err := s.GetWebhook(ctx, "r1")
		must(t, err)
		if w.Status != WebhookPending || w.Attempts != 1 || w.Code != 503 || w.Error == "" {
			t.Fatalf("after a failed attempt: %+v", w)
		}

		endWithHook(t, s, "th2", "r2")
		if ids := claimIDs(t, s, time.Minute); len(ids) != 1 || ids[0] != "r2" {
			t.Fatalf("claim = %v, want [r2]", ids)
		}
		must(t, s.RecordWebhookAttempt(ctx, "r2", WebhookAttempt{Attempt: 1, Code: 200, Status: WebhookDelivered}))
		if ids := claimIDs(t, s, time.Minute); len(ids) != 0 {
			t.Fatalf("claimed %v after the only due delivery was delivered", ids)
		}
		w, err = s.GetWebhook(ctx, "r2")
		must(t, err)
		if w.Status != WebhookDelivered || w.Attempts != 1 || w.Code != 200 || !w.NextAt.IsZero() {
			t.Fatalf("delivered: %+v", w)
		}
	})
}

// TestWebhookClaimedOnce: stores on one database claiming at the same
// time never get the same delivery, and between them get every one.
func TestWebhookClaimedOnce(t *testing.T) {
	eachDurable(t, func(t *testing.T, open func() Store) {
		const n = 60
		first := open()
		for i := range n {
			endWithHook(t, first, fmt.Sprintf("th%d", i), fmt.Sprintf("r%d", i))
		}
		stores := []Store{first, open(), open()}
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		for _, s := range stores {
			wg.Go(func() {
				for range 20 {
					ws, err := s.ClaimWebhooks(context.Background(), 3, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, w := range ws {
						got[w.RunID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(got) != n {
			t.Errorf("%d of %d deliveries were claimed", len(got), n)
		}
		for id, c := range got {
			if c != 1 {
				t.Errorf("delivery %s was claimed %d times", id, c)
			}
		}
	})
}

// TestWebhookClaimOfGoneServer: a delivery claimed by a server that is
// gone is claimed by another once its claim's hold has passed: at once
// when the server closed its store, after its lease when it crashed; a
// live server's claim is left alone, and the server that lost its claim
// cannot record an outcome over the new one.
func TestWebhookClaimOfGoneServer(t *testing.T) {
	eachDurable(t, func(t *testing.T, open func() Store) {
		ctx := context.Background()
		a, b := open(), open()
		endWithHook(t, a, "th", "r1")
		if ids := claimIDs(t, a, time.Millisecond); len(ids) != 1 {
			t.Fatalf("a claimed %v", ids)
		}
		time.Sleep(5 * time.Millisecond)
		if ids := claimIDs(t, b, time.Millisecond); len(ids) != 0 {
			t.Fatalf("b took %v from a live server", ids)
		}
		must(t, a.Close())
		time.Sleep(5 * time.Millisecond)
		if ids := claimIDs(t, b, time.Minute); len(ids) != 1 || ids[0] != "r1" {
			t.Fatalf("b claimed %v after a closed, want [r1]", ids)
		}
		must(t, b.RecordWebhookAttempt(ctx, "r1", WebhookAttempt{Attempt: 1, Code: 200, Status: WebhookDelivered}))
	})
	t.Run("crash", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "dawn.db")
		st, err := OpenWith(path, Options{Lease: time.Minute})
		must(t, err)
		a := st.(*DB)
		b := openTest(t, path)
		endWithHook(t, a, "th", "r1")
		if ids := claimIDs(t, a, time.Millisecond); len(ids) != 1 {
			t.Fatalf("a claimed %v", ids)
		}
		abandon(t, a)
		time.Sleep(5 * time.Millisecond)
		if ids := claimIDs(t, b, time.Millisecond); len(ids) != 0 {
			t.Fatalf("b took %v within a's lease", ids)
		}
		start := time.Now()
		setClock(b, func() time.Time { return start.Add(2 * time.Minute) })
		time.Sleep(5 * time.Millisecond)
		if ids := claimIDs(t, b, time.Minute); len(ids) != 1 || ids[0] != "r1" {
			t.Fatalf("b claimed %v after a's lease expired, want [r1]", ids)
		}
	})
}

// TestWebhookRelease: the claims a stopping server releases are due at
// once for another, and a thread's deletion deletes its deliveries.
func TestWebhookRelease(t *testing.T) {
	eachDurable(t, func(t *testing.T, open func() Store) {
		ctx := context.Background()
		a, b := open(), open()
		endWithHook(t, a, "th", "r1")
		if ids := claimIDs(t, a, time.Hour); len(ids) != 1 {
			t.Fatalf("a claimed %v", ids)
		}
		n, err := a.ReleaseWebhooks(ctx)
		must(t, err)
		if n != 1 {
			t.Fatalf("released %d, want 1", n)
		}
		if ids := claimIDs(t, b, time.Hour); len(ids) != 1 {
			t.Fatalf("b claimed %v after a released, want [r1]", ids)
		}
		if err := a.RecordWebhookAttempt(ctx, "r1", WebhookAttempt{Attempt: 1, Status: WebhookDelivered}); !errors.Is(err, ErrNotClaimed) {
			t.Fatalf("a recorded an attempt after releasing its claim: %v", err)
		}
		must(t, a.Close())
		if _, err := a.ClaimWebhooks(ctx, 1, time.Hour); !errors.Is(err, ErrClosed) {
			t.Fatalf("ClaimWebhooks on a closed store: %v, want ErrClosed", err)
		}
	})
}

// TestWebhookRetention: a sweep deletes the deliveries that ended before
// its bound and keeps the pending ones whatever their age; deleting a
// thread deletes its deliveries.
func TestWebhookRetention(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, id := range []string{"r1", "r2", "r3"} {
			endWithHook(t, s, "th-"+id, id)
		}
		claimIDs(t, s, time.Hour)
		must(t, s.RecordWebhookAttempt(ctx, "r1", WebhookAttempt{Attempt: 1, Code: 200, Status: WebhookDelivered}))
		must(t, s.RecordWebhookAttempt(ctx, "r2", WebhookAttempt{Attempt: 1, Code: 404, Status: WebhookFailed}))
		must(t, s.RecordWebhookAttempt(ctx, "r3", WebhookAttempt{Attempt: 1, Code: 503, Status: WebhookPending, Next: time.Now()}))
		n, err := s.SweepWebhooks(ctx, time.Now().Add(-time.Hour))
		must(t, err)
		if n != 0 {
			t.Fatalf("swept %d deliveries that ended just now", n)
		}
		n, err = s.SweepWebhooks(ctx, time.Now().Add(time.Second))
		must(t, err)
		if n != 2 {
			t.Fatalf("swept %d, want the 2 that ended", n)
		}
		for id, want := range map[string]error{"r1": ErrNotFound, "r2": ErrNotFound, "r3": nil} {
			if _, err := s.GetWebhook(ctx, id); !errors.Is(err, want) && err != want {
				t.Errorf("after the sweep, %s: %v, want %v", id, err, want)
			}
		}
		must(t, s.DeleteThread(ctx, "th-r3"))
		if _, err := s.GetWebhook(ctx, "r3"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the delivery of a deleted thread: %v", err)
		}
		if ids := claimIDs(t, s, time.Hour); len(ids) != 0 {
			t.Fatalf("claimed %v from a deleted thread", ids)
		}
	})
}

// BenchmarkClaimWebhooksNoneDue is a server's poll of the outbox when
// nothing is due, with many ended deliveries kept and one pending
// delivery due in an hour: one read through the due index.
func BenchmarkClaimWebhooksNoneDue(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, filepath.Join(b.TempDir(), "dawn.db"))
	for i := range 200 {
		id := fmt.Sprintf("r%d", i)
		newRun(b, s, "th-"+id, id)
		must(b, s.EndRun(ctx, id, Finish{Status: RunSuccess, Webhook: hookOf(id)}, nil))
	}
	ws, err := s.ClaimWebhooks(ctx, 1000, time.Hour)
	must(b, err)
	for i, w := range ws {
		a := WebhookAttempt{Attempt: 1, Code: 200, Status: WebhookDelivered}
		if i == 0 {
			a = WebhookAttempt{Attempt: 1, Code: 503, Status: WebhookPending, Next: time.Now().Add(time.Hour)}
		}
		must(b, s.RecordWebhookAttempt(ctx, w.RunID, a))
	}
	b.ReportAllocs()
	for b.Loop() {
		if ws, err := s.ClaimWebhooks(ctx, 16, time.Minute); err != nil || len(ws) != 0 {
			b.Fatalf("claimed %d (%v)", len(ws), err)
		}
	}
}
