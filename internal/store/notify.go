package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channels of Notifier.
const (
	// ChannelEvents carries a run id each time events of the run, or its
	// end, are committed: replicas that follow the run read them then.
	// The stores send it themselves, in the transaction that commits.
	ChannelEvents = "dawn_events"
	// ChannelSignals carries supervisor signals for runs wherever they
	// run: the runner publishes them, the replica running the run acts.
	ChannelSignals = "dawn_signals"
)

// Notifier is what a store shared by several processes offers so that they
// can reach each other's runs. Postgres implements it with LISTEN/NOTIFY;
// an SQLite store is one process's, and does not.
//
// Notifications are wake-ups, not a queue: one sent while a listener's
// connection is down is lost, so a listener that must not miss a change
// also polls the store now and then.
type Notifier interface {
	// Publish sends payload to every subscriber of channel, in every
	// process on the database, this one included.
	Publish(ctx context.Context, channel, payload string) error
	// Subscribe returns a channel of the payloads sent on channel, and
	// the function that ends the subscription. Payloads a slow
	// subscriber has no room for are dropped.
	Subscribe(channel string) (<-chan string, func())
}

var _ Notifier = (*Postgres)(nil)

// Publish implements Notifier with pg_notify.
func (s *Postgres) Publish(ctx context.Context, channel, payload string) error {
	_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload)
	return err
}

// Subscribe implements Notifier.
func (s *Postgres) Subscribe(channel string) (<-chan string, func()) {
	return s.notify.subscribe(channel)
}

// pgNotifier holds one connection that LISTENs on the store's channels and
// hands what arrives to the subscribers. It connects on first subscribe,
// and connects again after an error.
type pgNotifier struct {
	cfg *pgx.ConnConfig

	mu     sync.Mutex
	subs   map[string]map[chan string]struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has ended; nil before it starts
	ready  chan struct{} // closed once the first LISTEN is in place
}

func newPGNotifier(cfg *pgx.ConnConfig) *pgNotifier {
	ctx, cancel := context.WithCancel(context.Background())
	return &pgNotifier{cfg: cfg, subs: map[string]map[chan string]struct{}{}, ctx: ctx, cancel: cancel}
}

// subscribeBuffer is how many payloads a subscriber may fall behind by.
const subscribeBuffer = 256

func (n *pgNotifier) subscribe(channel string) (<-chan string, func()) {
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
func (n *pgNotifier) loop() {
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

func (n *pgNotifier) listen(ready func()) {
	conn, err := pgx.ConnectConfig(n.ctx, n.cfg)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	for _, c := range []string{ChannelEvents, ChannelSignals} {
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

func (n *pgNotifier) close() {
	n.cancel()
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	if done != nil {
		<-done
	}
}
