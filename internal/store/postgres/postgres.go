// Package postgres is the store's Postgres dialect (pgx): its schema and
// SQL, row locks that make the writes of every replica on one database
// take turns, leases by the database's clock, and LISTEN/NOTIFY. The
// store's logic is in package store; this package knows only rows (see
// package dialect), and imports nothing of this module but the dialect
// seam.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net/url"

	"regexp"
	"strings"

	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the advisory lock held while migrating,
// so that replicas starting at once migrate one after another: the first
// applies what is missing, the others find it done.
const migrationLock = 0x6461776e // "dawn"

// connectTimeout bounds how long opening a Postgres store waits for the
// database before failing start-up.
const connectTimeout = 15 * time.Second

// DB is a Postgres database, which any number of servers (replicas) may
// share. Every write is one transaction, committed before the call
// returns, and locks the rows of the thread it writes (FOR UPDATE) before
// it reads what it checks, so the writes to one thread take turns
// whichever replica makes them; the database itself refuses a second
// running run on a thread (a partial unique index). It also implements
// dialect.Notifier, over LISTEN and NOTIFY, so that replicas can reach
// each other's runs.
type DB struct {
	pool   pool
	where  string // the URL without its password, for messages
	notify *notifier
	closed atomic.Bool
}

// Remote reports that the database is reached over a network, which a
// store may be cut off from (see store.contact).
func (s *DB) Remote() bool { return true }

// IsURL reports whether dsn names a Postgres database rather than an
// SQLite file.
func IsURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open connects to the Postgres database at dsn (a postgres:// or
// postgresql:// URL) and brings its schema up to date under an advisory
// lock. A URL that does not parse, or a database that cannot be reached
// within connectTimeout, fails with an error that names the host but
// never the password.
func Open(dsn string) (*DB, error) {
	where := Redact(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w: %s is not a valid Postgres URL (%s); write it as postgres://user:password@host:5432/database",
			dialect.ErrInvalid, where, scrub(err.Error(), dsn))
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	cfg.ConnConfig.ConnectTimeout = connectTimeout
	host := fmt.Sprintf("%s:%d", cfg.ConnConfig.Host, cfg.ConnConfig.Port)
	s := &DB{where: where}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if s.pool.Pool, err = pgxpool.NewWithConfig(ctx, cfg); err == nil {
		err = s.pool.Ping(ctx)
	}
	if err != nil {
		if s.pool.Pool != nil {
			s.pool.Close()
		}
		return nil, fmt.Errorf("store: cannot reach the Postgres database at %s (%s): %s", host, where, scrub(err.Error(), dsn))
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("store: open %s: %s", where, scrub(err.Error(), dsn))
	}
	s.notify = newNotifier(cfg.ConnConfig)
	return s, nil
}

// Redact returns a Postgres URL with any password replaced by "xxxxx",
// for messages and logs; anything else (a file path) as it is.
func Redact(dsn string) string {
	if !IsURL(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// Not a URL Go parses (a bad port, say): blank what sits
		// between "user:" and "@".
		return userInfoPassword.ReplaceAllString(dsn, "${1}xxxxx@")
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

var userInfoPassword = regexp.MustCompile(`^([a-z]+://[^:/@]*:)[^@]*@`)

// scrub removes the password of dsn from an error text, should a driver
// have quoted it.
func scrub(text, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		if m := userInfoPassword.FindStringSubmatch(dsn); m != nil {
			if pw := strings.TrimSuffix(strings.TrimPrefix(m[0], m[1]), "@"); pw != "" {
				text = strings.ReplaceAll(text, pw, "xxxxx")
			}
		}
		return text
	}
	if pw, has := u.User.Password(); has && pw != "" {
		text = strings.ReplaceAll(text, pw, "xxxxx")
		text = strings.ReplaceAll(text, url.QueryEscape(pw), "xxxxx")
	}
	if pw := u.Query().Get("password"); pw != "" {
		text = strings.ReplaceAll(text, pw, "xxxxx")
	}
	return text
}

// migrate applies the embedded migrations that the database lacks, each in
// its own transaction with its version, holding a session advisory lock so
// that replicas starting together never apply one twice.
func (s *DB) migrate(ctx context.Context) error {
	list, err := loadMigrations()
	if err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, migrationLock) }()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS dawn_schema (version integer NOT NULL)`); err != nil {
		return err
	}
	var have int
	err = conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM dawn_schema`).Scan(&have)
	if err != nil {
		return err
	}
	if have > len(list) {
		return fmt.Errorf("schema version %d is newer than this build of dawn knows (%d): upgrade dawn or use another database", have, len(list))
	}
	for _, m := range list[have:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO dawn_schema(version) VALUES ($1)`, m.Version)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// loadMigrations reads the embedded migrations.
func loadMigrations() ([]dialect.Migration, error) {
	return dialect.ReadMigrations(migrationFiles, "migrations")
}

// Path returns the database URL without its password.
func (s *DB) Path() string { return s.where }

// Close stops the listener and closes the pool. Closing twice is a no-op.
func (s *DB) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.notify.close()
	s.pool.Close()
	return nil
}

// Stats reports the number of threads and the size of the database.
func (s *DB) Stats(ctx context.Context) (threads int, bytes int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM threads), pg_database_size(current_database())`).Scan(&threads, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("store: stats: %w", err)
	}
	return threads, bytes, nil
}

// Write runs fn in a transaction, committed before it returns. A
// transaction the database aborted for a deadlock or a serialization
// failure (two replicas touching the same rows in opposite orders) runs
// again.
func (s *DB) Write(ctx context.Context, fn func(dialect.Tx) error) error {
	if s.closed.Load() {
		return dialect.ErrClosed
	}
	ctx = context.WithoutCancel(ctx)
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool.Pool, func(ptx pgx.Tx) error {
			t := &tx{tx: ptx, b: &pgx.Batch{}}
			if err := fn(t); err != nil {
				return err
			}
			return t.flush(ctx)
		})
		if !retryable(err) {
			return classify(err)
		}
	}
	return classify(err)
}

// retryable reports whether err is a deadlock or serialization failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// uniqueViolation returns the name of the unique index err violates, or "".
func uniqueViolation(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.ConstraintName
	}
	return ""
}
