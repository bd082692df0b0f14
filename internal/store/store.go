package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/internal/store/postgres"
	"github.com/dawn-go/dawn/internal/store/sqlite"
)

// Errors callers test with errors.Is. Returned errors wrap them with the
// thread or run they concern.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	// ErrBusy is returned by BeginRunChecked and DeleteThread when the
	// thread already has a running run.
	ErrBusy = errors.New("thread has a run in flight")
	// ErrNotRunning is returned by SaveStep and FinishRun for a run that has
	// already finished (or was marked interrupted).
	ErrNotRunning = errors.New("run is not running")
	// ErrStepOrder is returned by SaveStep when Step is not the thread's
	// previous step + 1: another writer got there first.
	ErrStepOrder = errors.New("step out of order")
	// ErrInvalid is returned for input the store refuses, such as metadata
	// that is not a JSON object or an empty id.
	ErrInvalid = dialect.ErrInvalid
	// ErrUnavailable means the store could not reach its database: the
	// connection was refused, cut or timed out, or the database is
	// shutting down or starting. The request may succeed later; nothing
	// in the error's message is for clients (it names the database's host
	// and user), so servers log it and tell clients only that the store
	// is unavailable.
	ErrUnavailable = dialect.ErrUnavailable
)

// Thread statuses.
const (
	StatusIdle        = "idle"
	StatusBusy        = "busy"
	StatusInterrupted = "interrupted"
	StatusError       = "error"
)

// Run statuses.
const (
	RunRunning     = "running"
	RunSuccess     = "success"
	RunError       = "error"
	RunCancelled   = "cancelled"
	RunInterrupted = "interrupted"
)

// MaxIDLen is the longest thread or run id the store accepts, in bytes.
const MaxIDLen = 256

// DefaultLease is how long an owner's claim on its runs lasts without being
// renewed, unless Options says otherwise.
const DefaultLease = 30 * time.Second

// Options tune a store opened with OpenWith. The zero value gives Open's
// defaults.
type Options struct {
	// Lease is how long the store's claim on the runs it starts lasts
	// without renewal; it renews it every Lease/3 while it is open. Once a
	// lease has expired, any store on the same database may mark the runs
	// of that owner interrupted. Zero means DefaultLease.
	Lease time.Duration
	// Index, when set, embeds the items put for search by meaning (see
	// Index and SearchItems); CheckIndex must accept it.
	Index *Index
}

// DB is the store over one database. It is safe for concurrent use.
type DB struct {
	d     dialect.Database
	lease time.Duration
	// private: no other process can open the database (SQLite's
	// ":memory:"), so there is no lease to keep.
	private bool
	clock   atomic.Int64 // last timestamp handed out, Unix nanoseconds
	// leaseTime is the clock of leases: time.Now, but in tests.
	leaseTime atomic.Pointer[func() time.Time]
	// itemTime is the clock items expire by: time.Now, but in tests.
	itemTime atomic.Pointer[func() time.Time]
	// wallTime is the clock of the store's timestamps (and so of thread
	// expiry): time.Now, but in tests.
	wallTime atomic.Pointer[func() time.Time]
	own      ownership
	// contact is the store's contact with a database reached over a
	// network (nil for a local one): a store cut off from it judges no
	// other owner's lease until it has been back a lease term.
	contact *contact
	packers packers
	closed  atomic.Bool
	quota   quotas
	// queuedWebhook builds the webhook delivery of a queued run that ends
	// without starting (see SetQueuedWebhook); nil: none.
	queuedWebhook atomic.Pointer[QueuedWebhook]
	// index embeds items for search by meaning; nil: words only.
	index *Index
}

var _ Store = (*DB)(nil)

// Open opens the store named by dsn with default options (see OpenWith).
func Open(dsn string) (Store, error) {
	return OpenWith(dsn, Options{})
}

// OpenWith opens the store named by dsn: a postgres:// or postgresql://
// URL opens a Postgres database (package postgres), anything else is an
// SQLite file path or ":memory:" (package sqlite). The store registers
// itself as an owner in the database and renews its lease while it is
// open (see Options and RecoverInterrupted), so that several processes
// can share one database.
func OpenWith(dsn string, o Options) (Store, error) {
	if o.Lease < 0 {
		return nil, fmt.Errorf("store: open %s: %w: lease %v is negative", Redact(dsn), ErrInvalid, o.Lease)
	}
	if IsPostgres(dsn) {
		d, err := postgres.Open(dsn)
		if err != nil {
			return nil, err
		}
		s, err := New(d, o)
		if err != nil {
			return nil, err
		}
		return &sharedDB{DB: s, Notifier: d}, nil
	}
	d, err := sqlite.Open(dsn)
	if err != nil {
		return nil, err
	}
	return New(d, o)
}

// New returns the store over d, registered as an owner; closing the store
// closes d. A database with a method Shared that says false is one
// process's alone: the store keeps no lease there.
func New(d dialect.Database, o Options) (*DB, error) {
	if o.Lease < 0 {
		return nil, fmt.Errorf("store: open %s: %w: lease %v is negative", d.Path(), ErrInvalid, o.Lease)
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.Index != nil {
		if err := CheckIndex(*o.Index); err != nil {
			return nil, fmt.Errorf("store: open %s: %w", d.Path(), err)
		}
	}
	s := &DB{d: d, lease: o.Lease, packers: make(packers, 8), index: o.Index}
	if p, ok := d.(interface{ Shared() bool }); ok && !p.Shared() {
		s.private = true
	}
	now := time.Now
	s.leaseTime.Store(&now)
	s.itemTime.Store(&now)
	s.wallTime.Store(&now)
	if r, ok := d.(interface{ Remote() bool }); ok && r.Remote() {
		s.contact = newContact(s.lease, time.Now())
	}
	if err := s.register(context.Background()); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("store: open %s: register the store's owner: %w", d.Path(), err)
	}
	return s, nil
}

// IsPostgres reports whether dsn names a Postgres database rather than an
// SQLite file.
func IsPostgres(dsn string) bool { return postgres.IsURL(dsn) }

// Redact returns a Postgres URL with any password replaced by "xxxxx",
// for messages and logs; anything else (a file path) as it is.
func Redact(dsn string) string { return postgres.Redact(dsn) }

// Path names the database for people: the file path, or the Postgres URL
// without its password.
func (s *DB) Path() string { return s.d.Path() }

// Stats reports how many threads the store holds and the size of its
// database in bytes.
func (s *DB) Stats(ctx context.Context) (threads int, bytes int64, err error) {
	threads, bytes, err = s.d.Stats(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("store: stats: %w", err)
	}
	return threads, bytes, nil
}

// Lease returns how long the store's lease lasts without renewal.
func (s *DB) Lease() time.Duration { return s.lease }

// Close ends the store's ownership (no more renewals, and its owner row is
// removed, so that whatever runs it leaves marked running are recovered by
// the next store that looks, without waiting for a lease to expire) and
// closes the database, after any write in flight. Every call after Close
// fails. Closing twice is a no-op.
func (s *DB) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	return errors.Join(s.release(), s.d.Close())
}

// FailWrites makes every write transaction fail with err, until
// FailWrites(nil), where the database offers such a fault-injection point
// for tests (SQLite's, as when the disk is full); elsewhere it does
// nothing.
func (s *DB) FailWrites(err error) {
	if f, ok := s.d.(interface{ FailWrites(error) }); ok {
		f.FailWrites(err)
	}
}

// write runs fn in one write transaction of the database.
func (s *DB) write(ctx context.Context, fn func(dialect.Tx) error) error {
	return s.d.Write(ctx, fn)
}

// now returns the current time in Unix nanoseconds, strictly increasing
// across calls so that rows written one after another sort in that order.
func (s *DB) now() int64 {
	t := (*s.wallTime.Load())().UnixNano()
	for {
		last := s.clock.Load()
		if t <= last {
			t = last + 1
		}
		if s.clock.CompareAndSwap(last, t) {
			return t
		}
	}
}

// fromNanos converts a stored timestamp to a UTC time.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// checkID rejects an empty or over-long id; what names it ("thread", "run").
func checkID(what, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s id is empty", ErrInvalid, what)
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("%w: %s id is %d bytes long, the limit is %d", ErrInvalid, what, len(id), MaxIDLen)
	}
	return nil
}

// wrapErr wraps a non-nil err with what failed; nil stays nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
