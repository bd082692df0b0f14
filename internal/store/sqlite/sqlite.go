// Package sqlite is the store's SQLite dialect (modernc.org/sqlite, pure
// Go): its schema and SQL, the one writer connection whose transactions
// concurrent writers share (a group commit), the read pool WAL allows
// beside it, and the background WAL checkpoints. The store's logic is in
// package store; this package knows only rows (see package dialect), and
// imports nothing of this module but the dialect seam.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dawn-go/dawn/internal/store/dialect"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// busyTimeoutMS is how long a connection waits for another process's write
// lock before failing with SQLITE_BUSY.
const busyTimeoutMS = 5000

// DB is one SQLite database. It is safe for concurrent use. Writes go
// through one connection, one transaction at a time, which concurrent
// writers share (see write); reads use a pool of connections that WAL
// lets run beside a write.
type DB struct {
	path string
	// mu is held for each write transaction, and for ":memory:", whose
	// reads share the writer connection, for each read as well.
	mu     sync.Mutex
	memory bool
	closed bool      // guarded by mu
	db     *sql.DB   // pool of exactly one connection: conn
	conn   *sql.Conn // the writer connection, held for the store's life
	reader *sql.DB   // read pool; nil for ":memory:"
	rq     querier   // where reads go: reader, or conn for ":memory:"
	st     statements
	ckpt   *checkpointer // nil for ":memory:"

	queueMu sync.Mutex
	queue   []*writeRequest // waiting for a group commit; guarded by queueMu

	fault atomic.Pointer[error] // set by FailWrites
}

// querier is what reads need; *sql.DB and *sql.Conn both have it.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// dsnPragmas are the connection settings of a file database, by role.
// page_size only matters to a new database, and must come before
// journal_mode, which creates the file: the driver runs _journal_mode after
// every _pragma.
const (
	writerPragmas = "_txlock=immediate&_pragma=busy_timeout(%[1]d)&_pragma=page_size(%[3]d)" +
		"&_journal_mode=WAL&_pragma=synchronous(NORMAL)" +
		"&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(%[2]d)"
	readerPragmas     = "_pragma=busy_timeout(%[1]d)&_pragma=query_only(1)"
	checkpointPragmas = "_pragma=busy_timeout(%[1]d)&_pragma=synchronous(NORMAL)"
)

// pageSize is the page size of a new database, in bytes. Each commit
// writes every page it changed to the WAL, and a step changes a few hundred
// bytes on each of a few pages, so half SQLite's default page halves what
// a commit checksums, copies and writes (bench/README.md has the figures).
// A row bigger than a page still fits: it continues on overflow pages.
// An existing database keeps the page size it was made with.
const pageSize = 2048

// walSizeLimit is the size the WAL file is cut back to after the WAL
// restarts, in bytes.
const walSizeLimit = 16 << 20

// Open opens the SQLite database at path, creating the file and its
// parent folders when missing, and brings its schema up to date. The path
// ":memory:" gives a private in-memory database, independent of any other
// open.
//
// A file database runs in WAL mode with synchronous=NORMAL. In WAL mode that
// setting never corrupts the database and survives the process being killed
// at any point: every committed transaction is in the WAL file, which the OS
// holds even if the process dies. Only a power loss or OS crash can lose the
// last transactions committed before it (they are not fsynced one by one),
// and even then the database stays consistent at an earlier commit. That
// trade buys an fsync-free commit, which the run rate needs; the fsyncs of
// checkpoints happen off the write path (see checkpointer).
func Open(path string) (*DB, error) {
	s := &DB{path: path, memory: path == ":memory:"}
	if err := s.open(); err != nil {
		_ = s.closeAll()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
}

// Shared reports whether other processes may open the database: false
// for ":memory:".
func (s *DB) Shared() bool { return !s.memory }

func (s *DB) open() error {
	ctx := context.Background()
	writerDSN := ":memory:"
	if !s.memory {
		if s.path == "" {
			return fmt.Errorf("%w: empty path (give a file name, or \":memory:\")", dialect.ErrInvalid)
		}
		if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
			return err
		}
		uri, err := fileURI(s.path)
		if err != nil {
			return err
		}
		writerDSN = uri + "?" + fmt.Sprintf(writerPragmas, busyTimeoutMS, walSizeLimit, pageSize)
		if s.reader, err = sql.Open("sqlite", uri+"?"+fmt.Sprintf(readerPragmas, busyTimeoutMS)); err != nil {
			return err
		}
		s.reader.SetMaxOpenConns(readers)
		s.reader.SetMaxIdleConns(readers)
		if s.ckpt, err = newCheckpointer(uri + "?" + fmt.Sprintf(checkpointPragmas, busyTimeoutMS)); err != nil {
			return err
		}
	}
	var err error
	if s.db, err = sql.Open("sqlite", writerDSN); err != nil {
		return err
	}
	s.db.SetMaxOpenConns(1)
	if s.conn, err = s.db.Conn(ctx); err != nil {
		return err
	}
	s.rq = s.reader
	if s.memory {
		s.rq = s.conn
	}
	if err := migrate(ctx, s.conn); err != nil {
		return err
	}
	if err := s.st.prepare(ctx, s.conn, s.rq); err != nil {
		return err
	}
	if s.ckpt != nil {
		s.ckpt.start()
	}
	return nil
}

// readers is the size of the read pool of a file database.
const readers = 4

// fileURI turns a file path into an SQLite URI, so that characters such as
// '?' and '#' in a folder name stay part of the path.
func fileURI(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	abs = filepath.ToSlash(abs)
	if !strings.HasPrefix(abs, "/") {
		abs = "/" + abs // Windows: C:/x becomes /C:/x
	}
	return "file:" + uriEscaper.Replace(abs), nil
}

var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// Close closes the database, after any write in flight. Reads in flight
// may fail, and so does every call after Close. Closing twice is a no-op.
func (s *DB) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.st.close()
	return s.closeAll()
}

// closeAll closes every connection, the writer last: as the last one to
// close, it checkpoints the WAL into the database file and removes it.
func (s *DB) closeAll() error {
	var errs []error
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.close())
	}
	if s.reader != nil {
		errs = append(errs, s.reader.Close())
	}
	if s.conn != nil {
		errs = append(errs, s.conn.Close())
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	return errors.Join(errs...)
}

// Path returns the path the store was opened with.
func (s *DB) Path() string { return s.path }

// Stats reports how many threads the store holds and the size of its
// database in bytes (page_count * page_size, WAL content included).
func (s *DB) Stats(ctx context.Context) (threads int, bytes int64, err error) {
	if s.memory {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	if err := s.rq.QueryRowContext(ctx, "SELECT count(*) FROM threads").Scan(&threads); err != nil {
		return 0, 0, fmt.Errorf("store: stats: %w", err)
	}
	var pages, size int64
	err = s.rq.QueryRowContext(ctx,
		"SELECT p.page_count, s.page_size FROM pragma_page_count() p, pragma_page_size() s").Scan(&pages, &size)
	if err != nil {
		return 0, 0, fmt.Errorf("store: stats: %w", err)
	}
	return threads, pages * size, nil
}

// lockRead is called at the start of a read; the read must call the
// returned function when done. Only ":memory:" needs the lock: its reads
// share the writer connection and must not see a write in the middle.
func (s *DB) lockRead() (unlock func()) {
	if !s.memory {
		return noUnlock
	}
	s.mu.Lock()
	return s.unlock
}

func (s *DB) unlock() { s.mu.Unlock() }

func noUnlock() {}
