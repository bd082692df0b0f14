package sandbox

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeProvider counts the boxes it starts and closes.
type fakeProvider struct {
	mu             sync.Mutex
	started, alive int
}

func (p *fakeProvider) Preflight(context.Context) error { return nil }

func (p *fakeProvider) Acquire(context.Context, string) (Box, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started++
	p.alive++
	return &fakeBox{p: p}, nil
}

func (p *fakeProvider) counts() (started, alive int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started, p.alive
}

type fakeBox struct{ p *fakeProvider }

func (b *fakeBox) Exec(context.Context, string, Output) (Result, error) { return Result{}, nil }
func (b *fakeBox) Write(context.Context, []File, []string) error        { return nil }
func (b *fakeBox) Read(context.Context, Limits) (Snapshot, error)       { return Snapshot{}, nil }
func (b *fakeBox) Close(context.Context) error {
	b.p.mu.Lock()
	defer b.p.mu.Unlock()
	b.p.alive--
	return nil
}

// TestPool: a key's box is started once and reused (its record kept),
// a broken lease closes it, Destroy closes a thread's boxes by prefix
// only, an idle box is released, and a closed pool lends nothing.
func TestPool(t *testing.T) {
	ctx := context.Background()
	prov := &fakeProvider{}
	pool := NewPool(prov, 200*time.Millisecond)
	use := func(key string, broken bool) (cold bool) {
		t.Helper()
		if err := pool.Use(ctx, key, func(l *Lease) error {
			cold = l.Cold
			if l.Cold {
				l.Synced["a"] = "1"
			} else if l.Synced["a"] != "1" {
				t.Errorf("%s: the record was not kept with the warm box", key)
			}
			l.Broken = broken
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return cold
	}
	if !use("t1\x00/r", false) || use("t1\x00/r", false) {
		t.Fatal("the first lease is not cold, or the second not warm")
	}
	use("t1\x00/r", true)
	if _, alive := prov.counts(); alive != 0 {
		t.Fatalf("a broken lease left %d boxes", alive)
	}
	use("t1\x00/r", false)
	use("t1\x00/sub", false)
	use("t10\x00/r", false)
	if err := pool.Destroy(ctx, "t1\x00"); err != nil {
		t.Fatal(err)
	}
	if _, alive := prov.counts(); alive != 1 || pool.Warm() != 1 {
		t.Fatalf("after destroying t1: %d boxes alive, %d warm; want t10's only", alive, pool.Warm())
	}
	deadline := time.Now().Add(5 * time.Second)
	for pool.Warm() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, alive := prov.counts(); alive != 0 {
		t.Fatalf("the idle box was not released: %d alive", alive)
	}
	if err := pool.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pool.Use(ctx, "t2", func(*Lease) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Use after Close: %v", err)
	}
}

// TestCapped: the writer keeps its first Max bytes, accepts the rest and
// says it dropped some.
func TestCapped(t *testing.T) {
	c := &Capped{Max: 5}
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if string(c.Bytes()) != "abcde" || !c.Truncated() {
		t.Fatalf("kept %q, truncated %v", c.Bytes(), c.Truncated())
	}
}
