package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
)

var _ dialect.Notifier = (*DB)(nil)

// Publish implements Notifier with pg_notify.
func (s *DB) Publish(ctx context.Context, channel, payload string) error {
	_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload)
	return err
}

// Subscribe implements Notifier.
func (s *DB) Subscribe(channel string) (<-chan string, func()) {
	return s.notify.subscribe(channel)
}

// notifier holds one connection that LISTENs on the store's channels and
// hands what arrives to the subscribers. It connects on first subscribe,
// and connects again after an error.
type notifier struct {
	cfg *pgx.ConnConfig

	mu     sync.Mutex
	subs   map[string]map[chan string]struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has ended; nil before it starts
	ready  chan struct{} // closed once the first LISTEN is in place
}

func newNotifier(cfg *pgx.ConnConfig) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	return &notifier{cfg: cfg, subs: map[string]map[chan string]struct{}{}, ctx: ctx, cancel: cancel}
}

// subscribeBuffer is how many payloads a subscriber may fall behind by.
const subscribeBuffer = 256

func (n *notifier) subscribe(channel string) (<-chan string, func()) {
	ch := make(chan string, subscribeBuffer)
	n.mu.Lock()
	if n.subs[channel] == nil {
		n.subs[channel] = map[chan string]struct{}{}
	}
	n.subs[channel][ch] = struct{}{}
	if n.done == nil && n.ctx.Err() == nil {
		n.done, n.ready = make(chan struct{}), make(chan struct{})
		go n.loop()
	}
	ready := n.ready
	n.mu.Unlock()
	// Wait (briefly) for the LISTEN, so that what is sent after
	// Subscribe returns arrives.
	if ready != nil {
		select {
		case <-ready:
		case <-time.After(5 * time.Second):
		}
	}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			n.mu.Lock()
			delete(n.subs[channel], ch)
			n.mu.Unlock()
		})
	}
}

// loop listens until close, connecting again after an error.
func (n *notifier) loop() {
	defer close(n.done)
	var readyOnce sync.Once
	for n.ctx.Err() == nil {
		n.listen(func() { readyOnce.Do(func() { close(n.ready) }) })
		select {
		case <-n.ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	readyOnce.Do(func() { close(n.ready) })
}

func (n *notifier) listen(ready func()) {
	conn, err := pgx.ConnectConfig(n.ctx, n.cfg)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	for _, c := range []string{dialect.ChannelEvents, dialect.ChannelSignals} {
		if _, err := conn.Exec(n.ctx, "LISTEN "+pgx.Identifier{c}.Sanitize()); err != nil {
			return
		}
	}
	ready()
	for {
		msg, err := conn.WaitForNotification(n.ctx)
		if err != nil {
			return
		}
		n.mu.Lock()
		for ch := range n.subs[msg.Channel] {
			select {
			case ch <- msg.Payload:
			default:
			}
		}
		n.mu.Unlock()
	}
}

func (n *notifier) close() {
	n.cancel()
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	if done != nil {
		<-done
	}
}
