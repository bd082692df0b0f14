package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	owners "github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Quotas bound what one owner (a user: a thread's or a cron's owner, the
// label after owners.UsersLabel of an item's namespace) may keep in
// the store. A field of 0 bounds nothing; what belongs to no owner is
// never bounded. Each write that would pass a quota fails with a
// *QuotaError and changes nothing.
type Quotas struct {
	// Threads bounds the threads an owner has.
	Threads int
	// Crons bounds the crons an owner has.
	Crons int
	// QueuedRuns bounds the runs queued on an owner's threads, all
	// threads together (EnqueueRun's bound is per thread).
	QueuedRuns int
	// Items bounds the live items of the item store under an owner's
	// namespace.
	Items int
}

// ErrQuota is what a *QuotaError wraps.
var ErrQuota = errors.New("quota reached")

// QuotaError is a write refused because an owner holds as many of What
// ("threads", "crons", "queued_runs" or "store_items") as Limit allows.
type QuotaError struct {
	Owner, What string
	Limit       int
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("user %q has %d %s, the most one user may have", e.Owner, e.Limit, quotaNoun[e.What])
}

func (e *QuotaError) Unwrap() error { return ErrQuota }

var quotaNoun = map[string]string{
	dialect.OwnedThreads: "threads", dialect.OwnedCrons: "crons",
	dialect.OwnedQueued: "queued runs", quotaItems: "store items",
}

// quotaItems is the What of the item quota.
const quotaItems = "store_items"

// quotas holds a store's Quotas.
type quotas struct{ p atomic.Pointer[Quotas] }

// SetQuotas makes q the store's quotas, from the next write on.
func (s *DB) SetQuotas(q Quotas) { s.quota.p.Store(&q) }

// get returns the quotas, zero when none were set.
func (q *quotas) get() Quotas {
	if p := q.p.Load(); p != nil {
		return *p
	}
	return Quotas{}
}

// checkOwned fails with a *QuotaError when owner has more of what than
// its quota (limit), counted inside tx after the write that adds one: the
// transaction then rolls the write back.
func checkOwned(ctx context.Context, tx dialect.ThreadTx, what, owner string, limit int) error {
	if owner == "" || limit <= 0 {
		return nil
	}
	n, err := tx.CountOwned(ctx, what, owner)
	if err != nil {
		return fmt.Errorf("store: count the %s of user %q: %w", quotaNoun[what], owner, err)
	}
	if n > limit {
		return &QuotaError{Owner: owner, What: what, Limit: limit}
	}
	return nil
}

// checkThreads is checkOwned for a thread just inserted for owner.
func (s *DB) checkThreads(ctx context.Context, tx dialect.Tx, owner string) error {
	return checkOwned(ctx, tx, dialect.OwnedThreads, owner, s.quota.get().Threads)
}

// checkItems fails with a *QuotaError when the user whose namespace
// holds an item just put has more live items than the quota.
func (s *DB) checkItems(ctx context.Context, tx dialect.ItemTx, namespace []string, at int64) error {
	limit := s.quota.get().Items
	if limit <= 0 || len(namespace) < 2 || namespace[0] != owners.UsersLabel {
		return nil
	}
	n, err := tx.CountItems(ctx, encodeNamespace(namespace[:2]), at)
	if err != nil {
		return fmt.Errorf("store: count the items under %v: %w", namespace[:2], err)
	}
	if n > limit {
		user, _ := owners.UserFromLabel(namespace[1])
		return &QuotaError{Owner: user, What: quotaItems, Limit: limit}
	}
	return nil
}
