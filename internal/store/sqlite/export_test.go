package sqlite

import (
	"context"
	"database/sql"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// What the tests in package sqlite_test reach inside a DB.

const CheckpointEvery = checkpointEvery

var (
	LatestQuery            = latestQuery
	EventsQuery            = eventsQuery
	RecoverRuns            = recoverRuns
	RecoverThreads         = recoverThreads
	DeleteThreadStatements = deleteThreadStatements
	AnyExpiredItem         = anyExpiredItem
	DeleteExpiredItems     = deleteExpiredItems
	AnyDueWebhook          = anyDueWebhook
	DueWebhooks            = dueWebhooks
	DeleteEndedWebhooks    = deleteEndedWebhooks
	AnyExpiredThread       = anyExpiredThread
	ExpiredThreads         = expiredThreads
)

func LoadMigrations() ([]dialect.Migration, error) { return loadMigrations() }

// CheckpointRuns is how many background checkpoints ran.
func (s *DB) CheckpointRuns() int64 { return s.ckpt.runCount.Load() }

// CatchUp makes the writer checkpoint after its next commit.
func (s *DB) CatchUp() { s.ckpt.catchUp.Store(true) }

// Commits is how many transactions the writer committed.
func (s *DB) Commits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ckpt.commits
}

// WALFrames returns how many frames the WAL holds.
func (s *DB) WALFrames() (int, error) {
	var busy, frames, copied int
	err := s.ckpt.db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	return frames, err
}

// Writer is the writer connection, for statements outside any write.
func (s *DB) Writer() *sql.Conn { return s.conn }

// WriteConn runs fn as a write transaction on the writer connection.
func (s *DB) WriteConn(ctx context.Context, fn func(ctx context.Context, conn *sql.Conn) error) error {
	return s.write(ctx, func(ctx context.Context) error { return fn(ctx, s.conn) })
}

// HoldWriter takes the writer lock: writes queue until release.
func (s *DB) HoldWriter() (release func()) {
	s.mu.Lock()
	return s.mu.Unlock
}

// Queued is how many writes wait for a group commit.
func (s *DB) Queued() int {
	s.queueMu.Lock()
	defer s.queueMu.Unlock()
	return len(s.queue)
}

// SortColumns are the columns a thread search sorts by.
var SortColumns = sortColumns
