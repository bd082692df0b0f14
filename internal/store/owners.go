package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLease is how long an owner's claim on its runs lasts without being
// renewed, unless Options says otherwise.
const DefaultLease = 30 * time.Second

// Options tune a store opened with OpenWith. The zero value gives Open's
// defaults.
type Options struct {
	// Lease is how long the store's claim on the runs it starts lasts
	// without renewal; it renews it every Lease/3 while it is open. Once a
	// lease has expired, any store on the same database may mark the runs
	// of that owner interrupted. Zero means DefaultLease.
	Lease time.Duration
}

// ownership is a store's owner row: who it is, and the statements that keep
// its lease. Every open store is an owner, and every run it starts names it.
// A run still running is another process's business as long as its owner
// is alive; RecoverInterrupted takes only the runs of owners that are gone.
type ownership struct {
	pk        int64 // owners.pk; set by register, then fixed
	pid       int
	host      string
	hostKey   string // "" where pids cannot be checked
	procStart string

	check, claim, goodbye *sql.Stmt // on the writer connection

	// expires is when the lease ends as last committed, Unix nanoseconds.
	expires atomic.Int64

	stop     chan struct{} // closed to end the heartbeat
	stopOnce sync.Once
	done     chan struct{} // closed when the heartbeat has ended; nil without one
}

// OpenSQLite opens the SQLite store at path, creating the
// file and its parent folders when missing, and brings its schema up to
// date. The path ":memory:" gives a private in-memory database,
// independent of any other open.
//
// A file database runs in WAL mode with synchronous=NORMAL. In WAL mode that
// setting never corrupts the database and survives the process being killed
// at any point: every committed transaction is in the WAL file, which the OS
// holds even if the process dies. Only a power loss or OS crash can lose the
// last transactions committed before it (they are not fsynced one by one),
// and even then the database stays consistent at an earlier commit. That
// trade buys an fsync-free commit, which the run rate needs; the fsyncs of
// checkpoints happen off the write path (see checkpointer).
//
// The store registers itself as an owner in the database and renews its
// lease while it is open (see Options and RecoverInterrupted), so that
// several processes can share one file.
func OpenSQLite(path string, o Options) (*SQLite, error) {
	if o.Lease < 0 {
		return nil, fmt.Errorf("store: open %s: %w: lease %v is negative", path, ErrInvalid, o.Lease)
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	s := &SQLite{path: path, memory: path == ":memory:", lease: o.Lease, leaseTime: time.Now}
	if err := s.open(); err != nil {
		_ = s.closeAll()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return s, nil
}

// Lease returns how long the store's lease lasts without renewal.
func (s *SQLite) Lease() time.Duration { return s.lease }

// register inserts the store's owner row and, for a file database, starts
// the heartbeat that renews its lease. It is part of opening the store.
func (s *SQLite) register(ctx context.Context) error {
	o := &s.own
	o.pid = os.Getpid()
	o.host, _ = os.Hostname()
	o.hostKey, o.procStart = localProcess(o.host)
	list := []struct {
		dst  **sql.Stmt
		text string
	}{
		{&o.check, `SELECT expires_at FROM owners WHERE pk = ?`},
		// An upsert: a store whose row another one removed, judging its
		// lease expired, gets it back with the same pk.
		{&o.claim, `INSERT INTO owners(pk, pid, host, host_key, proc_start, started_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(pk) DO UPDATE SET expires_at = excluded.expires_at`},
		{&o.goodbye, `DELETE FROM owners WHERE pk = ?`},
	}
	for _, p := range list {
		stmt, err := s.conn.PrepareContext(ctx, p.text)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.text, err)
		}
		*p.dst = stmt
		s.st.all = append(s.st.all, stmt)
	}
	var expires int64
	err := s.write(ctx, func(ctx context.Context) error {
		now := s.leaseTime().UnixNano()
		expires = now + int64(s.lease)
		return s.conn.QueryRowContext(ctx, `INSERT INTO owners(pid, host, host_key, proc_start, started_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING pk`,
			o.pid, o.host, o.hostKey, o.procStart, now, expires).Scan(&o.pk)
	})
	if err != nil {
		return fmt.Errorf("register the store's owner: %w", err)
	}
	o.expires.Store(expires)
	o.stop = make(chan struct{})
	if !s.memory { // no other store can see an in-memory database
		o.done = make(chan struct{})
		go s.heartbeat()
	}
	return nil
}

// heartbeat renews the lease every third of it until the store closes. A
// renewal that fails (the database busy past its timeout, say) is tried
// again at the next beat: the lease has two more beats of slack.
func (s *SQLite) heartbeat() {
	defer close(s.own.done)
	t := time.NewTicker(s.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-s.own.stop:
			return
		case <-t.C:
			s.renewNow(context.Background())
		}
	}
}

// renewNow renews the lease in a write transaction of its own.
func (s *SQLite) renewNow(ctx context.Context) {
	var expires int64
	err := s.write(ctx, func(ctx context.Context) error {
		var err error
		expires, err = s.renew(ctx)
		return err
	})
	if err == nil {
		s.own.expires.Store(expires)
	}
}

// renew pushes the lease a full term forward, bringing the owner row back
// if another store removed it, and returns when it now ends. It runs
// inside a write transaction; the caller records the end once that
// transaction has committed.
func (s *SQLite) renew(ctx context.Context) (expires int64, err error) {
	o := &s.own
	now := s.leaseTime().UnixNano()
	expires = now + int64(s.lease)
	_, err = o.claim.ExecContext(ctx, o.pk, o.pid, o.host, o.hostKey, o.procStart, now, expires)
	return expires, err
}

// ownerOfNewRun returns the owner pk a run started now records, and makes
// sure the run is never, even for an instant, a run of an owner that looks
// gone. While the lease last committed has half its term left, which the
// heartbeat sees to, no other store can have judged it expired (given
// clocks that agree to within that half), and there is nothing to do.
// Otherwise (the heartbeat is late: the process was paused, say), inside
// the run's write transaction, it checks the owner row and renews it, or
// brings it back if another store removed it. Should that transaction roll
// back, so does the renewal, and the next run tries again.
func (s *SQLite) ownerOfNewRun(ctx context.Context) (int64, error) {
	half := int64(s.lease / 2)
	if s.own.expires.Load()-s.leaseTime().UnixNano() >= half {
		return s.own.pk, nil
	}
	var expires int64
	err := s.own.check.QueryRowContext(ctx, s.own.pk).Scan(&expires)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	if err != nil || expires-s.leaseTime().UnixNano() < half {
		if _, err := s.renew(ctx); err != nil {
			return 0, err
		}
	}
	return s.own.pk, nil
}

// insertRun inserts a running run owned by this store, inside a write
// transaction.
func (s *SQLite) insertRun(ctx context.Context, r Run, threadPK, now int64) error {
	owner, err := s.ownerOfNewRun(ctx)
	if err != nil {
		return err
	}
	_, err = s.st.insertRun.ExecContext(ctx, r.ID, threadPK, r.Route, now, now, owner)
	return err
}

// dropGoneOwners removes the owner rows of owners that are gone, inside
// RecoverInterrupted's write transaction, and renews this store's own
// lease. An owner is gone when its lease has expired, or when it is a
// process on this machine that no longer runs. A live owner is never
// judged by its pid alone being alive: a reused pid could pass for it, so
// it is gone once its lease expires anyway.
func (s *SQLite) dropGoneOwners(ctx context.Context) error {
	if _, err := s.renew(ctx); err != nil {
		return err
	}
	now := s.leaseTime().UnixNano()
	rows, err := s.conn.QueryContext(ctx, `SELECT pk, pid, host_key, proc_start, expires_at FROM owners WHERE pk != ?`, s.own.pk)
	if err != nil {
		return err
	}
	var gone []int64
	for rows.Next() {
		var pk, expires int64
		var pid int
		var hostKey, procStart string
		if err := rows.Scan(&pk, &pid, &hostKey, &procStart, &expires); err != nil {
			rows.Close()
			return err
		}
		if expires < now || (s.own.hostKey != "" && hostKey == s.own.hostKey && processGone(pid, procStart)) {
			gone = append(gone, pk)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, pk := range gone {
		if _, err := s.own.goodbye.ExecContext(ctx, pk); err != nil {
			return err
		}
	}
	return nil
}

// stopHeartbeat ends the heartbeat and waits for it. Calling it again is a
// no-op.
func (s *SQLite) stopHeartbeat() {
	o := &s.own
	if o.stop == nil {
		return
	}
	o.stopOnce.Do(func() { close(o.stop) })
	if o.done != nil {
		<-o.done
	}
}

// release ends the store's ownership: no more renewals, and its owner row
// is removed, so that whatever runs it leaves marked running are recovered
// by the next store that looks, without waiting for a lease to expire.
func (s *SQLite) release() {
	s.stopHeartbeat()
	if s.own.goodbye == nil || s.memory {
		return
	}
	_ = s.write(context.Background(), func(ctx context.Context) error {
		_, err := s.own.goodbye.ExecContext(ctx, s.own.pk)
		return err
	})
}
