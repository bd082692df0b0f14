package sqlite

import (
	"context"
	"database/sql"
	"sync/atomic"
)

// checkpointer copies the WAL into the database file in the background.
//
// The writer connection never checkpoints on its own (wal_autocheckpoint=0),
// so a commit only appends to the WAL and never waits for an fsync. Every
// checkpointEvery commits the writer wakes this goroutine, which runs a
// PASSIVE checkpoint on its own connection: it copies what it can without
// blocking the writer or readers, and the fsyncs happen there.
//
// SQLite restarts the WAL from its beginning only when a checkpoint has
// caught up with it before a write starts. A writer that never pauses can
// keep a background checkpoint from ever catching up, so when the WAL
// passes walMaxFrames the writer checkpoints once itself, between two
// transactions, where nothing can get ahead of it.
type checkpointer struct {
	db       *sql.DB
	wake     chan struct{}
	done     chan struct{}
	started  bool
	commits  int          // guarded by the DB's mu
	catchUp  atomic.Bool  // set when the writer should checkpoint itself
	runCount atomic.Int64 // background checkpoints done, for tests
}

// checkpointEvery is how many commits go by between two background
// checkpoints. A run is about three commits, and they rewrite the same few
// last pages of each table and index, so the longer the interval, the more
// of those rewrites a checkpoint copies only once, and the fewer fsyncs it
// makes; 256 commits are about 1,300 WAL pages (under 3 MiB). Going from 32
// to 256 cut the store's CPU per run by about 14%; 1,024 bought nothing.
//
// walMaxFrames is the WAL size, in pages (16 MiB of 2 KiB pages), past
// which the writer steps in.
const (
	checkpointEvery = 256
	walMaxFrames    = 8192
)

func newCheckpointer(dsn string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &checkpointer{db: db, wake: make(chan struct{}, 1), done: make(chan struct{})}, nil
}

// committed is called by the writer, holding the DB's mu, after each
// commit.
func (c *checkpointer) committed(ctx context.Context, writer *sql.Conn) {
	if c.catchUp.Load() {
		c.catchUp.Store(false)
		c.checkpoint(ctx, writer)
	}
	c.commits++
	if c.commits%checkpointEvery == 0 {
		select {
		case c.wake <- struct{}{}:
		default: // one is already pending
		}
	}
}

// start starts the background goroutine.
func (c *checkpointer) start() {
	c.started = true
	go c.run()
}

// run checkpoints each time it is woken, until close.
func (c *checkpointer) run() {
	defer close(c.done)
	for range c.wake {
		if frames := c.checkpoint(context.Background(), c.db); frames > walMaxFrames {
			c.catchUp.Store(true)
		}
		c.runCount.Add(1)
	}
}

// checkpoint runs a PASSIVE checkpoint through q and returns how many
// frames the WAL holds. An error is dropped: a failed checkpoint loses
// nothing, and the next one copies the same frames.
func (c *checkpointer) checkpoint(ctx context.Context, q querier) int {
	var busy, frames, copied int
	if err := q.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		return 0
	}
	return frames
}

// close stops the goroutine, if it was started, and closes its connection.
func (c *checkpointer) close() error {
	close(c.wake)
	if c.started {
		<-c.done
	}
	return c.db.Close()
}
