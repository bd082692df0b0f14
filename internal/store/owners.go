package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// ownership is a store's owner row: who it is, and when its lease ends.
// Every open store is an owner, and every run it starts names it. A run
// still running is another process's business as long as its owner is
// alive; RecoverInterrupted takes only the runs of owners that are gone.
type ownership struct {
	pk  int64 // set by register, then fixed
	who dialect.Owner

	// expires is when the lease ends as last committed, by this
	// process's clock, Unix nanoseconds.
	expires atomic.Int64

	stop     chan struct{} // closed to end the heartbeat
	stopOnce sync.Once
	done     chan struct{} // closed when the heartbeat has ended; nil without one
}

// interruptedText is the error of a run that RecoverInterrupted marks.
const interruptedText = "the server stopped while this run was in flight; its last completed step is kept, start a new run to continue"

// leaseNow is the time by the clock of leases.
func (s *DB) leaseNow() time.Time { return (*s.leaseTime.Load())() }

// register inserts the store's owner row and, for a database other
// processes can open, starts the heartbeat that renews its lease. It is
// part of opening the store.
func (s *DB) register(ctx context.Context) error {
	o := &s.own
	host, _ := os.Hostname()
	o.who = dialect.Owner{PID: os.Getpid(), Host: host}
	o.who.HostKey, o.who.ProcStart = localProcess(host)
	at := s.leaseNow()
	err := s.write(ctx, func(tx dialect.Tx) error {
		var err error
		o.pk, err = tx.InsertOwner(ctx, o.who, at, s.lease)
		return err
	})
	if err != nil {
		return err
	}
	o.expires.Store(at.UnixNano() + int64(s.lease))
	o.stop = make(chan struct{})
	if !s.private { // no other store can see a private database
		o.done = make(chan struct{})
		go s.heartbeat()
	}
	return nil
}

// heartbeat renews the lease every third of it until the store closes. A
// renewal that fails (the database busy past its timeout, say) is tried
// again at the next beat: the lease has two more beats of slack.
func (s *DB) heartbeat() {
	defer close(s.own.done)
	t := time.NewTicker(s.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-s.own.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.lease/3)
			s.renewNow(ctx)
			cancel()
		}
	}
}

// renewNow renews the lease in a write transaction of its own.
func (s *DB) renewNow(ctx context.Context) {
	at := s.leaseNow()
	err := s.write(ctx, func(tx dialect.Tx) error {
		return tx.RenewOwner(ctx, s.own.pk, s.own.who, at, s.lease)
	})
	if err == nil {
		s.renewed(at.UnixNano() + int64(s.lease))
	}
}

// renewed records a committed renewal of the lease, which now ends at
// expires.
func (s *DB) renewed(expires int64) {
	s.own.expires.Store(expires)
	if s.contact != nil {
		s.contact.renewed(time.Now())
	}
}

// ownerOfNewRun returns the owner pk a run started now records, and makes
// sure the run is never, even for an instant, a run of an owner that looks
// gone. While the lease last committed has half its term left, which the
// heartbeat sees to, no other store can have judged it expired (given
// clocks that agree to within that half), and there is nothing to do.
// Otherwise (the heartbeat is late: the process was paused, say), the
// run's transaction renews the lease, or brings the owner row back if
// another store removed it, and renewed says when the lease then ends, to
// record once that transaction has committed. Should it roll back, so does
// the renewal, and the next run tries again.
func (s *DB) ownerOfNewRun(ctx context.Context, tx dialect.OwnerTx) (pk, renewed int64, err error) {
	at := s.leaseNow()
	if s.own.expires.Load()-at.UnixNano() >= int64(s.lease/2) {
		return s.own.pk, 0, nil
	}
	if err := tx.RenewOwner(ctx, s.own.pk, s.own.who, at, s.lease); err != nil {
		return 0, 0, err
	}
	return s.own.pk, at.UnixNano() + int64(s.lease), nil
}

// RecoverInterrupted marks the runs of owners that are gone: every run
// still marked running whose store was closed, or whose process is known
// to have ended, or whose owner's lease has expired, was cut off, so it
// becomes RunInterrupted with an error saying so, and its thread becomes
// StatusInterrupted (which accepts new runs). The runs of live owners,
// this store included, are left alone, so it is safe to call at any time
// and from any number of processes sharing the database: at start-up, and
// now and then to take over the runs of an owner that died. It returns
// how many runs it marked.
func (s *DB) RecoverInterrupted(ctx context.Context) (int, error) {
	_, n, err := s.recoverOrphans(ctx, false)
	return n, err
}

// ClaimOrphans is RecoverInterrupted for a store that continues the runs
// of gone owners: in the same transaction, it first makes this store the
// owner of every such run that kept its request (Run.Request), and returns
// those, still running, for the caller to continue; only the others are
// marked interrupted (n says how many). However many stores ask at once,
// each run goes to one of them. A claimed run this store cannot continue
// is the caller's to end (FinishRun).
func (s *DB) ClaimOrphans(ctx context.Context) (claimed []Run, n int, err error) {
	return s.recoverOrphans(ctx, true)
}

// recoverOrphans is RecoverInterrupted, and ClaimOrphans when claim is set.
func (s *DB) recoverOrphans(ctx context.Context, claim bool) (claimed []Run, n int, err error) {
	at := s.leaseNow()
	err = s.write(ctx, func(tx dialect.Tx) error {
		claimed, n = nil, 0
		if err := tx.RenewOwner(ctx, s.own.pk, s.own.who, at, s.lease); err != nil {
			return err
		}
		owners, err := tx.Owners(ctx, s.own.pk, at)
		if err != nil || !s.mayJudge() {
			return err
		}
		live, err := s.dropGoneOwners(ctx, tx, owners)
		if err != nil {
			return err
		}
		if claim {
			if claimed, err = s.claimOrphans(ctx, tx, live); err != nil {
				return err
			}
		}
		n, err = tx.InterruptOrphans(ctx, RunInterrupted, StatusInterrupted, interruptedText, s.now())
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: recover interrupted runs: %w", err)
	}
	s.own.expires.Store(at.UnixNano() + int64(s.lease))
	return claimed, n, nil
}

// claimOrphans makes this store the owner of the runs of gone owners that
// kept their request, and returns them. live holds the owners still alive
// (this store among them): a run another store claimed while this one
// waited for its lock names a live owner, and is left to it.
func (s *DB) claimOrphans(ctx context.Context, tx dialect.OwnerTx, live map[int64]bool) ([]Run, error) {
	rows, err := tx.OrphanRuns(ctx)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	var pks []int64
	var runs []Run
	now := s.now()
	for _, r := range rows {
		if live[r.Owner] {
			continue
		}
		pks = append(pks, r.PK)
		runs = append(runs, Run{ID: r.ID, ThreadID: r.ThreadID, Route: r.Route, Status: RunRunning,
			Request: json.RawMessage(r.Request), CreatedAt: fromNanos(r.CreatedAt), UpdatedAt: fromNanos(now)})
	}
	if err := tx.ClaimRuns(ctx, pks, s.own.pk, now); err != nil {
		return nil, err
	}
	return runs, nil
}

// mayJudge records the renewal RecoverInterrupted just made (Owners has
// read after it) and reports whether the store may take expired leases for
// gone owners. A store that was cut off from a database it reaches over a
// network judges none until it has been back a whole lease term: the
// others may have been cut off too, and a lease that ran out in an outage
// says nothing about its owner.
func (s *DB) mayJudge() bool {
	if s.contact == nil {
		return true
	}
	now := time.Now()
	s.contact.renewed(now)
	return s.contact.mayJudge(now)
}

// dropGoneOwners removes the owner rows of owners that are gone. An owner
// is gone when its lease has expired, or when it is a process on this
// machine that no longer runs. A live owner is never judged by its pid
// alone being alive: a reused pid could pass for it, so it is gone once
// its lease expires anyway. A database shared by many machines keeps no
// host key, and there only the lease judges. It returns the owners left,
// this store among them.
func (s *DB) dropGoneOwners(ctx context.Context, tx dialect.OwnerTx, owners []dialect.OwnerRow) (live map[int64]bool, err error) {
	live = map[int64]bool{s.own.pk: true}
	for _, o := range owners {
		if s.ownerGone(o) {
			if err := tx.DeleteOwner(ctx, o.PK); err != nil {
				return nil, err
			}
			continue
		}
		live[o.PK] = true
	}
	return live, nil
}

// ownerGone reports whether owner o is gone: its lease expired, or it is
// a process of this machine that has ended.
func (s *DB) ownerGone(o dialect.OwnerRow) bool {
	self := s.own.who.HostKey
	local := self != "" && o.HostKey == self
	return o.Expired || (local && processGone(o.PID, o.ProcStart))
}

// stopHeartbeat ends the heartbeat and waits for it. Calling it again is a
// no-op.
func (s *DB) stopHeartbeat() {
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
func (s *DB) release() error {
	s.stopHeartbeat()
	if s.private {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.write(ctx, func(tx dialect.Tx) error { return tx.DeleteOwner(ctx, s.own.pk) })
	if errors.Is(err, dialect.ErrClosed) {
		return nil
	}
	return err
}
