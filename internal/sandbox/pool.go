package sandbox

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// Pool keeps one warm box per key (a thread and route) and releases the
// boxes no command used for the idle timeout. A box's workspace is a
// cache of files kept elsewhere (the thread's state in the store), so
// releasing and destroying a box are the same act here: Close.
type Pool struct {
	prov Provider
	idle time.Duration

	mu      sync.Mutex
	boxes   map[string]*entry
	reaping bool
	closed  bool
}

type entry struct {
	mu   sync.Mutex // held while a lease is out
	box  Box
	last time.Time
	// synced is the lease holder's record of what the box holds.
	synced map[string]string
	gone   bool
}

// Lease is a box lent to one caller at a time.
type Lease struct {
	Box Box
	// Cold says the box was started for this lease, with an empty
	// workspace.
	Cold bool
	// Synced is the caller's record of the workspace files the box holds
	// (path to a digest); it is kept with the box between leases and
	// starts empty with a cold box.
	Synced map[string]string
	// Broken, set by the caller, closes the box when the lease ends.
	Broken bool
}

// NewPool returns a pool of prov's boxes released after idle.
func NewPool(prov Provider, idle time.Duration) *Pool {
	return &Pool{prov: prov, idle: idle, boxes: map[string]*entry{}}
}

// ErrClosed is returned by Use once the pool is closed.
var ErrClosed = errors.New("the sandbox pool is closed")

// Use lends key's box to fn, starting one if none is warm. Leases of one
// key wait for each other.
func (p *Pool) Use(ctx context.Context, key string, fn func(*Lease) error) error {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return ErrClosed
		}
		e := p.boxes[key]
		if e == nil {
			e = &entry{}
			p.boxes[key] = e
		}
		p.startReaper()
		p.mu.Unlock()
		e.mu.Lock()
		if e.gone { // reaped or destroyed while we waited
			e.mu.Unlock()
			continue
		}
		err := p.lend(ctx, key, e, fn)
		e.mu.Unlock()
		return err
	}
}

func (p *Pool) lend(ctx context.Context, key string, e *entry, fn func(*Lease) error) error {
	l := &Lease{Box: e.box, Synced: e.synced}
	if e.box == nil {
		box, err := p.prov.Acquire(ctx, key)
		if err != nil {
			p.drop(key, e)
			return err
		}
		e.box, e.synced = box, map[string]string{}
		l.Box, l.Synced, l.Cold = box, e.synced, true
	}
	err := fn(l)
	e.last = time.Now()
	if l.Broken {
		p.drop(key, e)
		_ = e.box.Close(context.WithoutCancel(ctx))
		e.box = nil
	}
	return err
}

// drop forgets e, whose lock the caller holds.
func (p *Pool) drop(key string, e *entry) {
	e.gone = true
	p.mu.Lock()
	if p.boxes[key] == e {
		delete(p.boxes, key)
	}
	p.mu.Unlock()
}

// Destroy closes the boxes of every key that starts with prefix (a
// thread's), waiting for their leases.
func (p *Pool) Destroy(ctx context.Context, prefix string) error {
	p.mu.Lock()
	var hit []string
	for k := range p.boxes {
		if strings.HasPrefix(k, prefix) {
			hit = append(hit, k)
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, k := range hit {
		errs = append(errs, p.closeKey(ctx, k, false))
	}
	return errors.Join(errs...)
}

// closeKey closes key's box; onlyIdle leaves a box in use or used within
// the idle timeout alone.
func (p *Pool) closeKey(ctx context.Context, key string, onlyIdle bool) error {
	p.mu.Lock()
	e := p.boxes[key]
	p.mu.Unlock()
	if e == nil {
		return nil
	}
	if onlyIdle {
		if !e.mu.TryLock() {
			return nil
		}
		if time.Since(e.last) < p.idle {
			e.mu.Unlock()
			return nil
		}
	} else {
		e.mu.Lock()
	}
	defer e.mu.Unlock()
	p.drop(key, e)
	if e.box == nil {
		return nil
	}
	err := e.box.Close(ctx)
	e.box = nil
	return err
}

// Warm returns how many boxes are running.
func (p *Pool) Warm() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.boxes)
}

// Close closes every box and refuses new leases.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return p.Destroy(ctx, "")
}

// startReaper starts the goroutine that releases idle boxes, unless it
// runs; it ends once no box is left. The caller holds p.mu.
func (p *Pool) startReaper() {
	if p.reaping || p.idle <= 0 {
		return
	}
	p.reaping = true
	tick := min(max(p.idle/4, 10*time.Millisecond), 30*time.Second)
	go func() {
		for {
			time.Sleep(tick)
			p.mu.Lock()
			keys := make([]string, 0, len(p.boxes))
			for k := range p.boxes {
				keys = append(keys, k)
			}
			if len(keys) == 0 || p.closed {
				p.reaping = false
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
			for _, k := range keys {
				_ = p.closeKey(context.Background(), k, true)
			}
		}
	}()
}
