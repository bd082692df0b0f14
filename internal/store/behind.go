package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// DefaultBehindWindow is how long a step written behind (SaveStepBehind)
// waits for a commit to share before the store commits it on its own
// (Options.BehindWindow): about the longest a crash can find it unwritten
// after SaveStepBehind returned.
const DefaultBehindWindow = 5 * time.Millisecond

// Pending is a step written behind: queued by SaveStepBehind, committed
// with the next write of the store that comes along (any run's), or on
// its own once it has waited the store's window (Options.BehindWindow).
type Pending struct {
	s    *DB
	ctx  context.Context // without cancellation
	fn   func(dialect.Tx) error
	done chan struct{}
	err  error // set before done is closed
	// release gives back what the queued write holds (its encoder).
	release func()
	// taken says a write has taken the step from the queue, parked that
	// it waits outside the queue for the step before it to end, ended
	// that it has ended; next is the step of the same run that waits for
	// it (parked), which joins the queue when it ends. All are guarded by
	// the queue's mu.
	taken, parked, ended bool
	next                 *Pending
}

// Wait commits the step now if it is still queued, or waits for the write
// that took it, and returns how it ended: nil once it is committed.
func (p *Pending) Wait() error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	if group := p.s.behind.take(); len(group) > 0 {
		p.s.commitBehind(group)
	}
	<-p.done
	return p.err
}

// Failed reports whether the step has ended without being written, and
// why; a step still queued or in flight has not failed (yet).
func (p *Pending) Failed() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// end records how the write ended and wakes its waiters. A step that
// waited for it joins the queue, or fails with it.
func (p *Pending) end(err error) {
	p.err = err
	if p.release != nil {
		p.release()
		p.release = nil
	}
	var next *Pending
	if p.s != nil {
		p.s.behind.mu.Lock()
		next, p.next, p.ended = p.next, nil, true
		p.s.behind.mu.Unlock()
	}
	close(p.done)
	switch {
	case next == nil:
	case err != nil:
		next.end(fmt.Errorf("the step before it was not saved: %w", err))
	default:
		next.s.behind.add(next.s, next, nil)
	}
}

// failedPending is a Pending that ended before it was queued.
func failedPending(err error) *Pending {
	p := &Pending{done: make(chan struct{})}
	p.end(err)
	return p
}

// behindQueue holds the steps written behind that no write has taken yet.
type behindQueue struct {
	mu     sync.Mutex
	queue  []*Pending
	timer  *time.Timer
	window time.Duration
}

// add queues p, and arms the timer that commits the queue when p is the
// first step in it. When after, the step p follows, is in flight or waits
// itself, p waits for it to end instead (see Pending.end): a write that
// took p now could reach the database first.
func (q *behindQueue) add(s *DB, p, after *Pending) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if after != nil && !after.ended && (after.taken || after.parked) {
		after.next, p.parked = p, true
		return
	}
	p.parked = false
	q.queue = append(q.queue, p)
	if len(q.queue) > 1 {
		return
	}
	if q.timer == nil {
		q.timer = time.AfterFunc(q.window, s.flushBehind)
		return
	}
	q.timer.Reset(q.window)
}

// take empties the queue and returns what it held, each step followed by
// the steps of its run that waited for it (parked): in one transaction,
// in that order, they land in order.
func (q *behindQueue) take() []*Pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		return nil
	}
	group := make([]*Pending, 0, len(q.queue))
	for _, p := range q.queue {
		for p != nil {
			next := p.next
			p.taken, p.parked, p.next = true, false, nil
			group = append(group, p)
			p = next
		}
	}
	clear(q.queue)
	q.queue = q.queue[:0]
	return group
}

// SaveStepBehind is SaveStep written behind: st is checked and encoded
// now, and queued; the caller goes on at once and learns how the write
// ended from the Pending. The write commits with the next write of the
// store that comes along, whichever run's it is (one transaction then
// carries several runs' steps), or on its own after Options.BehindWindow. A later
// step of the same run names it as its Step.After, so that it always
// lands first. A step that fails its checks returns a Pending that has
// already failed.
func (s *DB) SaveStepBehind(ctx context.Context, st Step) *Pending {
	if s.closed.Load() {
		return failedPending(fmt.Errorf("store: save step %d of thread %q: %w", st.Step, st.ThreadID, dialect.ErrClosed))
	}
	enc := getEncoder()
	in, err := prepareStep(st, enc)
	if err != nil {
		putEncoder(enc)
		return failedPending(err)
	}
	ctx = context.WithoutCancel(ctx)
	p := &Pending{s: s, ctx: ctx, done: make(chan struct{}), release: func() { putEncoder(enc) }}
	p.fn = func(tx dialect.Tx) error { return s.stepTx(ctx, tx, st, &in) }
	s.behind.add(s, p, st.After)
	return p
}

// flushBehind commits what the queue holds; the queue's timer calls it.
func (s *DB) flushBehind() {
	if group := s.behind.take(); len(group) > 0 {
		s.commitBehind(group)
	}
}

// commitBehind writes group, taken from the queue, in one transaction.
// When that fails, each step is written in a transaction of its own, so
// that one step that cannot be written (its run ended meanwhile) costs
// the others nothing.
func (s *DB) commitBehind(group []*Pending) {
	err := s.commit(group[0].ctx, func(tx dialect.Tx) error { return runBehind(tx, group) })
	if err == nil || len(group) == 1 {
		for _, p := range group {
			p.end(err)
		}
		return
	}
	for _, p := range group {
		p.end(s.commit(p.ctx, p.fn))
	}
}

// runBehind runs the writes of group in tx, in order.
func runBehind(tx dialect.Tx, group []*Pending) error {
	for _, p := range group {
		if err := p.fn(tx); err != nil {
			return err
		}
	}
	return nil
}

// write runs fn in one write transaction of the database, with the steps
// written behind that are still queued before it: they share its commit.
// after, when set, is a step written behind that fn must follow: when
// another write has it in flight, write waits for it, and when it failed,
// fn is not run and its error is returned.
func (s *DB) write(ctx context.Context, fn func(dialect.Tx) error, after ...*Pending) error {
	group := s.behind.take()
	for _, p := range after {
		if p == nil || slices.Contains(group, p) {
			continue
		}
		if err := p.Wait(); err != nil {
			s.requeue(group)
			return err
		}
	}
	if len(group) == 0 {
		return s.commit(ctx, fn)
	}
	err := s.commit(ctx, func(tx dialect.Tx) error {
		if err := runBehind(tx, group); err != nil {
			return err
		}
		return fn(tx)
	})
	if err == nil {
		for _, p := range group {
			p.end(nil)
		}
		return nil
	}
	// Something in the shared transaction failed: the queued steps go
	// alone, then fn, unless it follows a step that failed.
	s.commitBehind(group)
	for _, p := range after {
		if p == nil {
			continue
		}
		if err := p.Failed(); err != nil {
			return err
		}
	}
	return s.commit(ctx, fn)
}

// requeue commits group, taken by a write that will not run.
func (s *DB) requeue(group []*Pending) {
	if len(group) > 0 {
		s.commitBehind(group)
	}
}

// closeBehind commits whatever is still queued, before the store closes.
func (s *DB) closeBehind() {
	s.behind.mu.Lock()
	if s.behind.timer != nil {
		s.behind.timer.Stop()
	}
	s.behind.mu.Unlock()
	s.flushBehind()
}

// commit runs fn in one write transaction of the database, and counts it
// when it commits.
func (s *DB) commit(ctx context.Context, fn func(dialect.Tx) error) error {
	err := s.d.Write(ctx, fn)
	if err == nil {
		s.commits.Add(1)
	}
	return err
}

// Commits is how many write transactions the store has committed since it
// was opened, each holding one write or several (SaveStepBehind).
func (s *DB) Commits() int64 { return s.commits.Load() }
