package stream_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// drain reads s until an error and returns the IDs it saw.
func drain(t *testing.T, s *stream.Subscription) []int64 {
	t.Helper()
	var ids []int64
	for {
		e, err := s.Next(context.Background())
		if err == io.EOF {
			return ids
		}
		if err != nil {
			t.Errorf("Next: %v", err)
			return ids
		}
		ids = append(ids, e.ID)
	}
}

func idsFrom(first, last int64) []int64 {
	var ids []int64
	for id := first; id <= last; id++ {
		ids = append(ids, id)
	}
	return ids
}

func equalIDs(a, b []int64) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func TestLogPublishNumbers(t *testing.T) {
	tests := []struct {
		name  string
		log   *stream.Log
		first int64
	}{
		{"NewLog starts at 1", stream.NewLog(), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.log
			for i := range int64(3) {
				e := l.Publish(stream.New("chunk", map[string]int64{"i": i}))
				if e.ID != tt.first+i {
					t.Errorf("event %d got ID %d, want %d", i, e.ID, tt.first+i)
				}
			}
			if l.Len() != 3 || l.LastID() != tt.first+2 {
				t.Errorf("Len, LastID = %d, %d", l.Len(), l.LastID())
			}
			if got := l.Since(tt.first); len(got) != 2 || got[0].ID != tt.first+1 {
				t.Errorf("Since(%d) = %v", tt.first, got)
			}
			if got := l.Since(0); len(got) != 3 {
				t.Errorf("Since(0) has %d events, want 3", len(got))
			}
			if got := l.Since(tt.first + 100); len(got) != 0 {
				t.Errorf("Since(beyond) has %d events, want 0", len(got))
			}
			l.Close()
			l.Close()
			if !l.Closed() {
				t.Error("Closed() = false after Close")
			}
			if e := l.Publish(stream.New("chunk", nil)); e.ID != 0 || l.Len() != 3 {
				t.Errorf("Publish after Close gave ID %d and Len %d", e.ID, l.Len())
			}
		})
	}
}

func TestLogSinceIsACopy(t *testing.T) {
	l := stream.NewLog()
	l.Publish(stream.New("a", nil))
	got := l.Since(0)
	got[0].Type = "changed"
	if l.Since(0)[0].Type != "a" {
		t.Error("changing Since's result changed the log")
	}
}

func TestLogConcurrentSubscribers(t *testing.T) {
	const events, subscribers = 2000, 16
	l := stream.NewLog()
	results := make([][]int64, subscribers)
	var wg sync.WaitGroup
	for i := range subscribers {
		s := l.Subscribe(0)
		wg.Go(func() { results[i] = drain(t, s) })
	}
	for i := range events {
		l.Publish(stream.New("chunk", map[string]int{"i": i}))
	}
	l.Close()
	wg.Wait()
	want := idsFrom(1, events)
	for i, got := range results {
		if !equalIDs(got, want) {
			t.Errorf("subscriber %d got %d events, not 1..%d in order", i, len(got), events)
		}
	}
}

func TestLogLateSubscriberReplays(t *testing.T) {
	tests := []struct {
		after int64
		want  []int64
	}{
		{0, idsFrom(1, 8)},
		{3, idsFrom(4, 8)},
		{5, idsFrom(6, 8)},
		{8, nil},
		{50, nil},
		{-4, idsFrom(1, 8)},
	}
	for _, tt := range tests {
		l := stream.NewLog()
		for range 5 {
			l.Publish(stream.New("chunk", nil))
		}
		s := l.Subscribe(tt.after)
		var wg sync.WaitGroup
		var got []int64
		wg.Go(func() { got = drain(t, s) })
		for range 3 {
			l.Publish(stream.New("chunk", nil))
		}
		l.Close()
		wg.Wait()
		if !equalIDs(got, tt.want) {
			t.Errorf("Subscribe(%d) got %v, want %v", tt.after, got, tt.want)
		}
	}
}

func TestLogCloseEndsWaitingSubscriber(t *testing.T) {
	l := stream.NewLog()
	s := l.Subscribe(0)
	errc := make(chan error)
	go func() {
		_, err := s.Next(context.Background())
		errc <- err
	}()
	l.Close()
	if err := <-errc; err != io.EOF {
		t.Fatalf("Next on a closed empty log = %v, want io.EOF", err)
	}
}

func TestSubscriptionContext(t *testing.T) {
	l := stream.NewLog()
	l.Publish(stream.New("chunk", nil))
	s := l.Subscribe(0)
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error)
	go func() {
		_, err := s.Next(ctx)
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with a deadline = %v, want context.DeadlineExceeded", err)
	}
	// The subscription still works afterwards.
	l.Publish(stream.New("chunk", nil))
	if e, err := s.Next(context.Background()); err != nil || e.ID != 2 {
		t.Fatalf("Next after a cancelled wait = %d, %v; want 2, nil", e.ID, err)
	}
}

func TestSubscriptionClose(t *testing.T) {
	l := stream.NewLog()
	s := l.Subscribe(0)
	errc := make(chan error)
	go func() {
		_, err := s.Next(context.Background())
		errc <- err
	}()
	s.Close()
	s.Close()
	if err := <-errc; err != stream.ErrSubscriptionClosed {
		t.Fatalf("Next after Close = %v, want ErrSubscriptionClosed", err)
	}
	l.Publish(stream.New("chunk", nil))
	if _, err := s.Next(context.Background()); err != stream.ErrSubscriptionClosed {
		t.Fatalf("Next after Close with events = %v, want ErrSubscriptionClosed", err)
	}
}

func TestLogPublishNeverWaitsForReaders(t *testing.T) {
	l := stream.NewLog()
	for range 10 {
		l.Subscribe(0) // subscribers that never read
	}
	stuck := l.Subscribe(0)
	go func() { _, _ = stuck.Next(context.Background()) }() // reads one, then never again
	// A Publish that waited for readers would hang here until the test
	// binary's timeout.
	for range 100000 {
		l.Publish(stream.New("chunk", nil))
	}
	l.Close()
	if l.Len() != 100000 {
		t.Fatalf("Len = %d, want 100000", l.Len())
	}
}

func TestLogEmit(t *testing.T) {
	l := stream.NewLog()
	var emit stream.Emitter = l.Emit
	emit(stream.New("a", nil))
	emit(stream.New("b", nil))
	if got := l.Since(0); len(got) != 2 || got[1].ID != 2 || got[1].Type != "b" {
		t.Fatalf("events after Emit = %v", got)
	}
}

// TestLogShortRunIsSmall checks that a run of a few events holds memory for
// about those events: a server holds thousands of runs in flight, and most
// have a dozen events or so.
func TestLogShortRunIsSmall(t *testing.T) {
	const logs, events = 200, 15
	kept := make([]*stream.Log, logs)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range kept {
		l := stream.NewLog()
		for range events {
			l.Publish(stream.Event{Type: "chunk"})
		}
		kept[i] = l
	}
	runtime.ReadMemStats(&after)
	perLog := (after.TotalAlloc - before.TotalAlloc) / logs
	// 15 events of 48 bytes; growing by doubling allocates at most about
	// twice that, plus the Log itself.
	if limit := uint64(4 * events * 48); perLog > limit {
		t.Errorf("a log of %d events allocated %d bytes, want at most %d", events, perLog, limit)
	}
	runtime.KeepAlive(kept)
}

// TestLogLongRunKeepsOrder publishes past the first block and checks every
// event comes back in order, from Since and from a subscriber.
func TestLogLongRunKeepsOrder(t *testing.T) {
	l := stream.NewLog()
	const n = 1000
	for i := range n {
		l.Publish(stream.Event{Type: fmt.Sprint(i)})
	}
	l.Close()
	got := l.Since(0)
	if len(got) != n {
		t.Fatalf("Since(0) returned %d events, want %d", len(got), n)
	}
	for i, e := range got {
		if e.ID != int64(i+1) || e.Type != fmt.Sprint(i) {
			t.Fatalf("event %d is %+v", i, e)
		}
	}
	for _, after := range []int64{0, 1, 255, 256, 257, 511, 512, 999} {
		if ids := drain(t, l.Subscribe(after)); !equalIDs(ids, idsFrom(after+1, n)) {
			t.Errorf("Subscribe(%d) read %d events from %v", after, len(ids), ids[:min(3, len(ids))])
		}
	}
}

// TestSubscriptionReady checks Ready: true exactly when Next would not
// wait, for an event to read or a closed log.
func TestSubscriptionReady(t *testing.T) {
	l := stream.NewLog()
	s := l.Subscribe(0)
	if s.Ready() {
		t.Fatal("Ready on an empty open log")
	}
	l.Publish(stream.Event{Type: "a"})
	l.Publish(stream.Event{Type: "b"})
	for _, want := range []string{"a", "b"} {
		if !s.Ready() {
			t.Fatalf("not Ready with %q to read", want)
		}
		if e, err := s.Next(context.Background()); err != nil || e.Type != want {
			t.Fatalf("Next = %+v, %v; want %q", e, err, want)
		}
	}
	if s.Ready() {
		t.Fatal("Ready with everything read and the log open")
	}
	l.Close()
	if !s.Ready() {
		t.Fatal("not Ready on a closed log (Next returns io.EOF at once)")
	}
}
