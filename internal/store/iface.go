package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Store is a thread store: threads, their runs, checkpoints and run event
// logs. SQLite (an embedded file, the default) and Postgres (a database
// several servers share) implement it with the same contract; the tests in
// this package run against both. Every implementation is safe for
// concurrent use, and several processes may share one database: each open
// store is an owner that holds a lease on the runs it starts (see
// RecoverInterrupted), and the database itself refuses a second running
// run on a thread (ErrBusy), whichever process asks.
type Store interface {
	CreateThread(ctx context.Context, id string, metadata json.RawMessage) (Thread, error)
	GetThread(ctx context.Context, id string) (Thread, error)
	DeleteThread(ctx context.Context, id string) error

	StartRun(ctx context.Context, r Run) error
	BeginRun(ctx context.Context, r Run) (Checkpoint, error)
	// BeginRunChecked is BeginRun that hands the thread's latest
	// checkpoint to check inside the transaction; an error from check
	// undoes everything and is returned as it is.
	BeginRunChecked(ctx context.Context, r Run, check func(Checkpoint) error) (Checkpoint, error)
	FinishRun(ctx context.Context, runID, status, errMsg string, output json.RawMessage, events []stream.Event) error
	GetRun(ctx context.Context, runID string) (Run, error)
	Runs(ctx context.Context, threadID string) ([]Run, error)
	RecoverInterrupted(ctx context.Context) (int, error)

	SaveStep(ctx context.Context, st Step) error
	Latest(ctx context.Context, threadID string) (Checkpoint, error)
	Events(ctx context.Context, runID string, after int64) ([]stream.Event, error)
	// EventsPage is Events with at most limit events (all of them when
	// limit is 0 or less), so that a long log is read a page at a time.
	EventsPage(ctx context.Context, runID string, after int64, limit int) ([]stream.Event, error)
	SaveValues(ctx context.Context, threadID string, step int, values thread.State) error

	// SearchThreads and CountThreads select threads by id, status,
	// metadata and state values; FinishedRuns lists a thread's successful
	// runs, the checkpoints the LangGraph dialect's history shows.
	SearchThreads(ctx context.Context, q ThreadQuery) ([]Thread, error)
	CountThreads(ctx context.Context, q ThreadQuery) (int, error)
	FinishedRuns(ctx context.Context, q FinishedQuery) ([]FinishedRun, error)

	// SetAppValues and AppValues keep values for the whole app, across
	// threads, such as a person's "always allow this tool".
	SetAppValues(ctx context.Context, values map[string]json.RawMessage) error
	AppValues(ctx context.Context) (thread.State, error)

	// Path names the database for people: the file path, or the
	// Postgres URL without its password.
	Path() string
	Stats(ctx context.Context) (threads int, bytes int64, err error)
	// Lease is how long the store's claim on its runs lasts unrenewed.
	Lease() time.Duration
	Close() error
}

var _ Store = (*SQLite)(nil)

// Open opens the store named by dsn with default options (see OpenWith).
func Open(dsn string) (Store, error) {
	return OpenWith(dsn, Options{})
}

// OpenWith opens the store named by dsn: a postgres:// or postgresql://
// URL opens a Postgres store (see OpenPostgres), anything else is an
// SQLite file path or ":memory:" (see OpenSQLite).
func OpenWith(dsn string, o Options) (Store, error) {
	// A typed nil must not become a non-nil Store.
	if IsPostgres(dsn) {
		if s, err := OpenPostgres(dsn, o); err == nil {
			return s, nil
		} else {
			return nil, err
		}
	}
	if s, err := OpenSQLite(dsn, o); err == nil {
		return s, nil
	} else {
		return nil, err
	}
}

// IsPostgres reports whether dsn names a Postgres database rather than an
// SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
