package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrUnavailable means the store could not reach its database: the
// connection was refused, cut or timed out, or the database is shutting
// down or starting. The request may succeed later; nothing in the error's
// message is for clients (it names the database's host and user), so
// servers log it and tell clients only that the store is unavailable.
var ErrUnavailable = errors.New("the store is unavailable")

// unavailableError is a driver error classified as ErrUnavailable. It
// matches both ErrUnavailable and the driver error (errors.Is, errors.As).
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return ErrUnavailable.Error() + ": " + e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// classify returns err as an ErrUnavailable when it says the database
// cannot be reached, and err as it is otherwise.
func classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || !unreachable(err) {
		return err
	}
	return &unavailableError{err: err}
}

// unreachable reports whether err comes from the database's connection
// rather than from the statement: a connect that failed, a connection cut
// or reset, a timeout of the driver, or the server refusing work while it
// shuts down, starts or is out of connections.
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	var pe *pgconn.PgError
	var ne net.Error
	switch {
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "08") || // connection exception
			pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || // shutdown, crash, cannot connect now
			pe.Code == "53300" // too many connections
	case errors.As(err, &ce), pgconn.Timeout(err), pgconn.SafeToRetry(err), errors.As(err, &ne):
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// pgPool is a connection pool whose statements' errors are classified
// (see classify): every read of the Postgres store goes through it, and
// every transaction through Postgres.tx, which classifies too.
type pgPool struct{ *pgxpool.Pool }

func (p pgPool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := p.Pool.Exec(ctx, sql, args...)
	return tag, classify(err)
}

func (p pgPool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := p.Pool.Query(ctx, sql, args...)
	if err != nil {
		return rows, classify(err)
	}
	return classifiedRows{rows}, nil
}

func (p pgPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return classifiedRow{p.Pool.QueryRow(ctx, sql, args...)}
}

type classifiedRows struct{ pgx.Rows }

func (r classifiedRows) Err() error { return classify(r.Rows.Err()) }

type classifiedRow struct{ pgx.Row }

func (r classifiedRow) Scan(dest ...any) error { return classify(r.Row.Scan(dest...)) }

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
