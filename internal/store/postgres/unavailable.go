package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// unavailableError is a driver error classified as dialect.ErrUnavailable.
// It matches both ErrUnavailable and the driver error (errors.Is,
// errors.As).
type unavailableError struct{ err error }

func (e *unavailableError) Error() string {
	return dialect.ErrUnavailable.Error() + ": " + e.err.Error()
}
func (e *unavailableError) Unwrap() []error { return []error{dialect.ErrUnavailable, e.err} }

// classify returns err as an ErrUnavailable when it says the database
// cannot be reached, as an ErrInvalid when a statement's text argument
// cannot be stored, and err as it is otherwise.
func classify(err error) error {
	switch {
	case err == nil || errors.Is(err, dialect.ErrUnavailable) || errors.Is(err, dialect.ErrInvalid):
		return err
	case unreachable(err):
		return &unavailableError{err: err}
	case badText(err):
		return &invalidTextError{err: err}
	}
	return err
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

// pool is a connection pool whose statements' errors are classified (see
// classify): every read goes through it, and every transaction through
// DB.Write, which classifies too.
type pool struct{ *pgxpool.Pool }

func (p pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := p.Pool.Exec(ctx, sql, args...)
	return tag, classify(err)
}

func (p pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := p.Pool.Query(ctx, sql, args...)
	if err != nil {
		return rows, classify(err)
	}
	return classifiedRows{rows}, nil
}

func (p pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return classifiedRow{p.Pool.QueryRow(ctx, sql, args...)}
}

type classifiedRows struct{ pgx.Rows }

func (r classifiedRows) Err() error { return classify(r.Rows.Err()) }

type classifiedRow struct{ pgx.Row }

func (r classifiedRow) Scan(dest ...any) error { return classify(r.Row.Scan(dest...)) }
