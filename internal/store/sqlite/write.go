package sqlite

import (
	"context"
	"fmt"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Write runs fn as one write transaction (see write).
func (s *DB) Write(ctx context.Context, fn func(dialect.Tx) error) error {
	return s.write(ctx, func(ctx context.Context) error { return fn(tx{s}) })
}

// writeRequest is one write transaction's work, waiting in DB.queue for
// the group commit that takes it.
type writeRequest struct {
	ctx      context.Context // without cancellation
	fn       func(ctx context.Context) error
	err      error
	panicked any  // what fn panicked with, re-raised in the caller
	done     bool // guarded by DB.mu
}

// write runs fn as one write transaction on the writer connection and
// returns once it is committed, or has failed and left nothing behind.
//
// Writes are committed in groups. A caller queues fn and takes the writer
// lock; by the time it has it, the writer may already have committed fn
// with the group of an earlier caller, and then it only returns the result.
// Otherwise it commits every fn queued so far in one transaction, each
// inside its own SAVEPOINT: a fn that fails is rolled back alone, and the
// others still commit. Each fn is all-or-nothing and durable before its
// caller returns, as with one transaction each, but concurrent writers
// share the commit, which writes each page they touched once: they append
// to the same last pages of each table and index.
//
// The transaction is BEGIN IMMEDIATE, so that it holds the write lock from
// the start and never fails to upgrade a read lock.
//
// ctx is checked before fn is queued. The statements themselves run without
// its cancellation: they take microseconds, and a context that can end
// makes the driver start a watcher goroutine for every statement.
func (s *DB) write(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &writeRequest{ctx: context.WithoutCancel(ctx), fn: fn}
	s.queueMu.Lock()
	s.queue = append(s.queue, req)
	s.queueMu.Unlock()

	s.mu.Lock()
	if !req.done {
		s.queueMu.Lock()
		group := s.queue
		s.queue = nil
		s.queueMu.Unlock()
		s.commitGroup(group)
	}
	s.mu.Unlock()
	if req.panicked != nil {
		panic(req.panicked)
	}
	return req.err
}

// commitGroup runs group, which holds at least one request, in one
// transaction, and marks every request done with its result. The caller
// holds mu.
func (s *DB) commitGroup(group []*writeRequest) {
	defer func() {
		for _, r := range group {
			r.done = true
		}
	}()
	ctx := group[0].ctx
	fail := func(err error) {
		for _, r := range group {
			if r.err == nil && r.panicked == nil {
				r.err = err
			}
		}
	}
	if s.closed {
		fail(dialect.ErrClosed)
		return
	}
	if _, err := s.st.begin.ExecContext(ctx); err != nil {
		fail(err)
		return
	}
	if len(group) == 1 { // nothing to keep apart: no savepoint
		if !group[0].run() {
			s.rollback(ctx)
			return
		}
	} else {
		for _, r := range group {
			if !s.runInSavepoint(r) {
				// SQLite gave up the whole transaction: the requests
				// that succeeded before this one are lost, and the ones
				// after it do not run.
				fail(fmt.Errorf("store: the transaction was rolled back after an error: %w", r.err))
				s.rollback(ctx)
				return
			}
		}
	}
	if f := s.fault.Load(); f != nil {
		fail(*f)
		s.rollback(ctx)
		return
	}
	if _, err := s.st.commit.ExecContext(ctx); err != nil {
		fail(err)
		s.rollback(ctx)
		return
	}
	if s.ckpt != nil {
		s.ckpt.committed(ctx, s.conn)
	}
}

// run calls the request's fn, catching a panic, and reports whether it
// succeeded.
func (r *writeRequest) run() (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
			ok = false
		}
	}()
	r.err = r.fn(r.ctx)
	return r.err == nil
}

// runInSavepoint runs r inside a savepoint of the open transaction and
// rolls back to it when r fails. It returns false only when the
// transaction itself is gone (SQLite rolls back the whole transaction on
// some errors, such as a full disk), and then r.err says why.
func (s *DB) runInSavepoint(r *writeRequest) bool {
	if _, err := s.st.savepoint.ExecContext(r.ctx); err != nil {
		r.err = err
		return false
	}
	if r.run() {
		if _, err := s.st.release.ExecContext(r.ctx); err != nil {
			r.err = err
			return false
		}
		return true
	}
	if _, err := s.st.rollbackTo.ExecContext(r.ctx); err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("write panicked: %v", r.panicked)
		}
		return false
	}
	_, err := s.st.release.ExecContext(r.ctx)
	return err == nil
}

// rollback ends a failed write transaction. Its error is dropped: SQLite
// may already have rolled back on its own, and the caller reports the
// first error.
func (s *DB) rollback(ctx context.Context) {
	_, _ = s.st.rollback.ExecContext(ctx)
}

// FailWrites makes every write transaction fail with err at its commit and
// roll back, as SQLite does when the disk is full or the file reaches its
// size limit, until FailWrites(nil). Reads go on working. It is a
// fault-injection point for tests of what callers do when the store cannot
// write; nothing else calls it.
func (s *DB) FailWrites(err error) {
	if err == nil {
		s.fault.Store(nil)
		return
	}
	s.fault.Store(&err)
}
