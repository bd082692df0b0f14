package stream

import (
	"context"
	"errors"
	"io"
	"sync"
)

// Log is the in-memory, append-only record of one run's events. The run
// publishes to it, and any number of subscribers read it at their own pace:
// the log itself is the buffer, so a slow subscriber only lags, a gone one
// costs nothing, and Publish never waits for a reader.
//
// Events are kept until the Log is dropped, so a client that joins late or
// reconnects gets everything after the last ID it saw. The Data of a
// published event is shared with every reader and must not be changed.
type Log struct {
	mu sync.Mutex
	// head holds the first logBlockSize events. It grows by appending, so
	// that a short run (most have a dozen events) holds room for about
	// its own: a server may hold thousands of runs at once.
	head []Event
	// blocks hold the events after those in fixed-size arrays, so that a
	// long run never copies more than its first block to grow and Publish
	// stays cheap at any length.
	blocks []*[logBlockSize]Event
	n      int // the number of events
	closed bool
	// wake is closed by the next Publish or Close to wake the subscribers
	// waiting on it. It is nil while nobody waits, so Publish allocates
	// nothing then.
	wake chan struct{}
}

// NewLog returns an empty log whose first event gets ID 1.
func NewLog() *Log { return &Log{} }

// Publish appends e with the next ID, wakes waiting subscribers and returns
// e with its ID. After Close it does nothing and returns e with ID 0.
func (l *Log) Publish(e Event) Event {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		e.ID = 0
		return e
	}
	e.ID = int64(l.n) + 1
	if l.n < logBlockSize {
		if l.head == nil {
			l.head = make([]Event, 0, logHeadSize)
		}
		l.head = append(l.head, e)
	} else {
		i := l.n - logBlockSize
		if i%logBlockSize == 0 {
			l.blocks = append(l.blocks, new([logBlockSize]Event))
		}
		l.blocks[i/logBlockSize][i%logBlockSize] = e
	}
	l.n++
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
	l.mu.Unlock()
	return e
}

// Emit publishes e; it makes a Log usable as an Emitter: Emitter(log.Emit).
func (l *Log) Emit(e Event) { l.Publish(e) }

// Close marks the end of the run: subscribers get io.EOF once they have read
// every event. Closing twice is harmless.
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}

// Closed reports whether Close has been called.
func (l *Log) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Len returns the number of events in the log.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// LastID returns the ID of the latest event, or the start ID when there is
// none yet.
func (l *Log) LastID() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(l.n)
}

// Since returns a copy of the events whose ID is greater than after.
func (l *Log) Since(after int64) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Event, 0, l.n-l.indexAfter(after))
	for i := l.indexAfter(after); i < l.n; i++ {
		out = append(out, l.at(i))
	}
	return out
}

// logBlockSize is the number of events in the head of a Log and in each of
// its blocks; logHeadSize is the room the head starts with.
const (
	logBlockSize = 256
	logHeadSize  = 16
)

// at returns the i-th event. The caller holds l.mu.
func (l *Log) at(i int) Event {
	if i < logBlockSize {
		return l.head[i]
	}
	i -= logBlockSize
	return l.blocks[i/logBlockSize][i%logBlockSize]
}

// indexAfter returns the index of the first event with an ID greater than
// after. The caller holds l.mu.
func (l *Log) indexAfter(after int64) int {
	switch i := after; {
	case i <= 0:
		return 0
	case i >= int64(l.n):
		return l.n
	default:
		return int(i)
	}
}

// ErrSubscriptionClosed is returned by Subscription.Next after Close.
var ErrSubscriptionClosed = errors.New("stream: subscription closed")

// Subscription reads a Log from a given point. One goroutine calls Next;
// Close may be called from any goroutine.
type Subscription struct {
	log   *Log
	after int64 // the ID of the last event returned
	done  chan struct{}
	once  sync.Once
	// ahead holds events copied from the log in one batch and not yet
	// returned, so that a lagging subscriber takes the log's lock once per
	// batch rather than once per event.
	ahead     []Event
	aheadNext int
}

// subscriptionBatch is the most events a Subscription copies per lock.
const subscriptionBatch = 64

// Subscribe returns a subscription to the events with an ID greater than
// after: 0 replays the whole run, a client's Last-Event-ID resumes it.
func (l *Log) Subscribe(after int64) *Subscription {
	return &Subscription{log: l, after: after, done: make(chan struct{})}
}

// Ready reports whether Next would return without waiting: an event is
// there to read, or the log is closed. A writer uses it to send a burst of
// events in one write, and to flush only before it waits.
func (s *Subscription) Ready() bool {
	if s.aheadNext < len(s.ahead) {
		return true
	}
	l := s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.indexAfter(s.after) < l.n || l.closed
}

// Next returns the next event, waiting for one to be published if needed.
// It returns io.EOF once the log is closed and every event has been read,
// ctx.Err() when ctx ends, and ErrSubscriptionClosed after Close.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	l := s.log
	for {
		if err := ctx.Err(); err != nil {
			return Event{}, err
		}
		select {
		case <-s.done:
			return Event{}, ErrSubscriptionClosed
		default:
		}
		if s.aheadNext < len(s.ahead) {
			e := s.ahead[s.aheadNext]
			s.ahead[s.aheadNext] = Event{}
			s.aheadNext++
			s.after = e.ID
			return e, nil
		}
		l.mu.Lock()
		if i := l.indexAfter(s.after); i < l.n {
			s.ahead, s.aheadNext = s.ahead[:0], 0
			for ; i < l.n && len(s.ahead) < subscriptionBatch; i++ {
				s.ahead = append(s.ahead, l.at(i))
			}
			l.mu.Unlock()
			continue
		}
		if l.closed {
			l.mu.Unlock()
			return Event{}, io.EOF
		}
		if l.wake == nil {
			l.wake = make(chan struct{})
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		case <-s.done:
			return Event{}, ErrSubscriptionClosed
		}
	}
}

// LastID returns the ID of the last event Next returned, or the after value
// given to Subscribe before that.
func (s *Subscription) LastID() int64 { return s.after }

// Close ends the subscription and wakes a Next waiting on it. The log keeps
// no reference to a subscription, so an unclosed one costs nothing either.
func (s *Subscription) Close() { s.once.Do(func() { close(s.done) }) }
