package postgres

import (
	"errors"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5/pgconn"
)

// invalidTextError is a driver error about a text value Postgres cannot
// keep, classified as dialect.ErrInvalid: the request's mistake, not the
// server's. It matches both ErrInvalid and the driver error.
type invalidTextError struct{ err error }

func (e *invalidTextError) Error() string {
	return "a text value holds a NUL character (\\u0000) or bytes that are not UTF-8, which Postgres cannot store; remove them (" + e.err.Error() + ")"
}
func (e *invalidTextError) Unwrap() []error { return []error{dialect.ErrInvalid, e.err} }

// badText reports whether err is Postgres refusing a text or JSON value:
// a NUL character (text cannot hold one, and jsonb refuses \u0000) or
// bytes that are not valid in the database's encoding.
func badText(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "22021" || pe.Code == "22P05") // character_not_in_repertoire, untranslatable_character
}
