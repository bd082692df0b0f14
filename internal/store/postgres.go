package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations_pg/*.sql
var pgMigrationFiles embed.FS

// pgMigrationLock is the key of the advisory lock held while migrating,
// so that replicas starting at once migrate one after another: the first
// applies what is missing, the others find it done.
const pgMigrationLock = 0x6461776e // "dawn"

// pgConnectTimeout bounds how long opening a Postgres store waits for the
// database before failing start-up.
const pgConnectTimeout = 15 * time.Second

// Postgres is a thread store in a Postgres database, which any number of
// servers (replicas) may share. It gives the same contract as SQLite:
// every write is one transaction, committed before the call returns; the
// database refuses a second running run on a thread (a partial unique
// index), whichever replica asks; each open store is an owner with a lease
// on the runs it started, renewed every third of the lease, and
// RecoverInterrupted takes only the runs of owners whose lease has expired
// (by the database's clock). It also implements Notifier, over LISTEN and
// NOTIFY, so that replicas can reach each other's runs.
type Postgres struct {
	pool  pgPool
	cfg   *pgxpool.Config
	where string // the URL without its password, for messages
	lease time.Duration
	clock atomic.Int64

	ownerPK int64
	// expires is when the lease ends as last committed, by this process's
	// clock (the time before the renewal plus the lease), Unix nanoseconds.
	expires atomic.Int64
	// contact says whether the store may judge other owners' leases
	// (see contact and RecoverInterrupted).
	contact   *contact
	stop      chan struct{}
	stopOnce  sync.Once
	heartbeat sync.WaitGroup

	notify *pgNotifier
	closed atomic.Bool
}

var _ Store = (*Postgres)(nil)

// OpenPostgres connects to the Postgres database at dsn (a postgres:// or
// postgresql:// URL), brings its schema up to date under an advisory lock
// and registers the store as an owner. A URL that does not parse, or a
// database that cannot be reached within pgConnectTimeout, fails with an
// error that names the host but never the password.
func OpenPostgres(dsn string, o Options) (*Postgres, error) {
	where := Redact(dsn)
	if o.Lease < 0 {
		return nil, fmt.Errorf("store: open %s: %w: lease %v is negative", where, ErrInvalid, o.Lease)
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w: %s is not a valid Postgres URL (%s); write it as postgres://user:password@host:5432/database",
			ErrInvalid, where, scrub(err.Error(), dsn))
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	cfg.ConnConfig.ConnectTimeout = pgConnectTimeout
	host := fmt.Sprintf("%s:%d", cfg.ConnConfig.Host, cfg.ConnConfig.Port)
	s := &Postgres{cfg: cfg, where: where, lease: o.Lease, stop: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), pgConnectTimeout)
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
	if err := s.register(ctx); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("store: open %s: register the store's owner: %s", where, scrub(err.Error(), dsn))
	}
	s.notify = newPGNotifier(cfg.ConnConfig)
	s.heartbeat.Go(s.beat)
	return s, nil
}

// Redact returns a Postgres URL with any password replaced by "xxxxx",
// for messages and logs; anything else (a file path) as it is.
func Redact(dsn string) string {
	if !IsPostgres(dsn) {
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
func (s *Postgres) migrate(ctx context.Context) error {
	list, err := loadPGMigrations()
	if err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, pgMigrationLock); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, pgMigrationLock) }()
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
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO dawn_schema(version) VALUES ($1)`, m.version)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// loadPGMigrations reads the embedded Postgres migrations.
func loadPGMigrations() ([]migration, error) {
	return readMigrations(pgMigrationFiles, "migrations_pg")
}

// register inserts the store's owner row.
func (s *Postgres) register(ctx context.Context) error {
	host, _ := os.Hostname()
	before := time.Now().UnixNano()
	err := s.pool.QueryRow(ctx, `INSERT INTO owners(pid, host, expires_at)
		VALUES ($1, $2, now() + $3 * interval '1 microsecond') RETURNING pk`,
		os.Getpid(), host, s.lease.Microseconds()).Scan(&s.ownerPK)
	if err != nil {
		return err
	}
	s.expires.Store(before + int64(s.lease))
	s.contact = newContact(s.lease, time.Now())
	return nil
}

// claimOwner renews the lease a full term, bringing the owner row back if
// another store removed it (its runs stay interrupted: recovery took them).
const claimOwner = `INSERT INTO owners(pk, pid, host, expires_at)
	VALUES ($1, $2, $3, now() + $4 * interval '1 microsecond')
	ON CONFLICT (pk) DO UPDATE SET expires_at = excluded.expires_at`

func (s *Postgres) renew(ctx context.Context, q querierPG) error {
	host, _ := os.Hostname()
	before := time.Now().UnixNano()
	if _, err := q.Exec(ctx, claimOwner, s.ownerPK, os.Getpid(), host, s.lease.Microseconds()); err != nil {
		return err
	}
	s.expires.Store(before + int64(s.lease))
	s.contact.renewed(time.Now())
	return nil
}

// beat renews the lease every third of it until Close. A failed renewal
// is tried again at the next beat.
func (s *Postgres) beat() {
	t := time.NewTicker(s.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.lease/3)
			_ = s.renew(ctx, s.pool)
			cancel()
		}
	}
}

// ownerOfNewRun is SQLite.ownerOfNewRun: while the lease has half its term
// left there is nothing to do; otherwise the run's transaction renews it
// first, so a run is never, even for an instant, one of an owner that
// looks gone.
func (s *Postgres) ownerOfNewRun(ctx context.Context, tx pgx.Tx) (int64, error) {
	if s.expires.Load()-time.Now().UnixNano() >= int64(s.lease/2) {
		return s.ownerPK, nil
	}
	return s.ownerPK, s.renew(ctx, tx)
}

// querierPG is what both a pool and a transaction offer.
type querierPG interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Lease returns how long the store's lease lasts without renewal.
func (s *Postgres) Lease() time.Duration { return s.lease }

// Path returns the database URL without its password.
func (s *Postgres) Path() string { return s.where }

// Close stops the heartbeat and the listener, removes the store's owner
// row (so its runs left running are recovered without waiting for the
// lease) and closes the pool. Closing twice is a no-op.
func (s *Postgres) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.stopOnce.Do(func() { close(s.stop) })
	s.heartbeat.Wait()
	s.notify.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.pool.Exec(ctx, `DELETE FROM owners WHERE pk = $1`, s.ownerPK)
	s.pool.Close()
	return err
}

// Stats reports the number of threads and the size of the database.
func (s *Postgres) Stats(ctx context.Context) (threads int, bytes int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM threads), pg_database_size(current_database())`).Scan(&threads, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("store: stats: %w", err)
	}
	return threads, bytes, nil
}

// now is SQLite.now: Unix nanoseconds, increasing within this process.
func (s *Postgres) now() int64 {
	t := time.Now().UnixNano()
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

// tx runs fn in a transaction, committed before it returns. A transaction
// the database aborted for a deadlock or a serialization failure (two
// replicas touching the same rows in opposite orders) runs again.
func (s *Postgres) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if s.closed.Load() {
		return errClosed
	}
	ctx = context.WithoutCancel(ctx)
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool.Pool, fn)
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
