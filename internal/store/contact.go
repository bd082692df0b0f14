package store

import (
	"sync"
	"time"
)

// contact records a store's contact with its database, so that a store
// that was cut off does not judge other owners' leases by it: while it
// could not reach the database, neither perhaps could they, and a lease
// that expired then says nothing about its owner being gone. Every
// successful renewal is a contact; a gap between two of them longer than
// half the lease (the heartbeat renews every third) means the store was
// cut off (or paused), and it may judge other leases again only after a
// whole lease term of contact since, in which every live owner has
// renewed.
type contact struct {
	lease time.Duration
	mu    sync.Mutex
	last  time.Time // the latest successful renewal
	since time.Time // the first renewal after the latest gap
}

// newContact returns the contact of a store that has just reached its
// database and registered: a store that starts judges at once, as one
// that restarts after a crash must to recover its own runs.
func newContact(lease time.Duration, now time.Time) *contact {
	return &contact{lease: lease, last: now, since: now.Add(-lease)}
}

// renewed records a successful renewal at now.
func (c *contact) renewed(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.last) > c.lease/2 {
		c.since = now
	}
	c.last = now
}

// mayJudge reports whether the store has been in contact long enough at
// now to take expired leases for gone owners.
func (c *contact) mayJudge(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return now.Sub(c.last) <= c.lease/2 && now.Sub(c.since) >= c.lease
}
