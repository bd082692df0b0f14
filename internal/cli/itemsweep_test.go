package cli

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

// syncBuffer is a bytes.Buffer that a logger and a test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSweepItemsLoop: a server's item sweep deletes the items that expire
// while it runs, keeps the others, and stops when the server does.
func TestSweepItemsLoop(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "dawn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.PutItemTTL(ctx, []string{"cache"}, "brief", json.RawMessage(`{}`), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := st.PutItem(ctx, []string{"cache"}, "kept", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	s := &stack{store: st, logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	loopCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.sweepItemsLoop(loopCtx, 10*time.Millisecond)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "items=1") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the sweep deleted no expired item in 10s; log:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the sweep did not stop with its context")
	}
	if n, err := st.SweepItems(ctx); err != nil || n != 0 {
		t.Errorf("after the loop, a sweep deleted %d (%v); want 0, the loop deleted it", n, err)
	}
	if _, err := st.GetItem(ctx, []string{"cache"}, "kept"); err != nil {
		t.Errorf("the sweep took an item that does not expire: %v", err)
	}
}
