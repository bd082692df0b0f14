package cli

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/store"
)

// TestSweepThreadsLoop: a server's thread sweep deletes the threads whose
// ttl runs out while it runs, keeps the others, and stops when the server
// does.
func TestSweepThreadsLoop(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "dawn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := st.CreateOwnedThreadTTL(ctx, "", "brief", nil, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateThread(ctx, "kept", nil); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	s := &stack{store: st, logger: slog.New(slog.NewTextHandler(&logs, nil))}
	loopCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.sweepThreadsLoop(loopCtx, 10*time.Millisecond)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "threads=1") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the sweep deleted no expired thread in 10s; log:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the sweep did not stop with its context")
	}
	if _, err := st.GetThread(ctx, "brief"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired thread after the sweep: %v, want ErrNotFound", err)
	}
	if _, err := st.GetThread(ctx, "kept"); err != nil {
		t.Errorf("the sweep took a thread without a ttl: %v", err)
	}
}

// TestThreadSweepInterval: DAWN_THREAD_SWEEP_INTERVAL sets how often a
// server sweeps; a value that is not a positive duration is refused,
// naming the variable.
func TestThreadSweepInterval(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"", defaultThreadSweep, false},
		{"250ms", 250 * time.Millisecond, false},
		{"2m", 2 * time.Minute, false},
		{"0s", 0, true},
		{"-1s", 0, true},
		{"often", 0, true},
	} {
		cfg := &Config{Env: func(k string) string {
			if k == "DAWN_THREAD_SWEEP_INTERVAL" {
				return tt.value
			}
			return ""
		}}
		got, err := threadSweepInterval(cfg)
		switch {
		case tt.bad && (err == nil || !strings.Contains(err.Error(), "DAWN_THREAD_SWEEP_INTERVAL")):
			t.Errorf("%q: %v, %v; want an error naming DAWN_THREAD_SWEEP_INTERVAL", tt.value, got, err)
		case !tt.bad && (err != nil || got != tt.want):
			t.Errorf("%q: %v, %v; want %v", tt.value, got, err, tt.want)
		}
	}
}
