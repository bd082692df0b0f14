package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Webhook delivery statuses: pending while attempts are left to make,
// then delivered or failed.
const (
	WebhookPending   = dialect.WebhookPending
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
)

// ErrNotClaimed is returned by RecordWebhookAttempt for a delivery this
// store does not hold a claim on: another server took it over, or it has
// ended.
var ErrNotClaimed = errors.New("webhook delivery is not claimed by this server")

// Webhook is the webhook delivery of a run, kept in the store's outbox:
// recorded with the end of the run (Finish.Webhook), sent by whichever
// server claims it when it is due (ClaimWebhooks), and readable from every
// server until it is swept (SweepWebhooks) or its thread is deleted.
type Webhook struct {
	RunID, ThreadID, URL string
	// Payload is the body to send, without the time it is sent at.
	Payload json.RawMessage
	// Status is WebhookPending, WebhookDelivered or WebhookFailed.
	Status string
	// Attempts is how many attempts were made, MaxAttempts how many may
	// be; Code and Error are the last one's answer (0 when none came)
	// and error.
	Attempts, MaxAttempts, Code int
	Error                       string
	// NextAt is when the next attempt is due (zero once it ended).
	NextAt               time.Time
	CreatedAt, UpdatedAt time.Time
}

// WebhookAttempt is how one attempt at a claimed delivery went.
type WebhookAttempt struct {
	// Attempt is its number, from 1.
	Attempt int
	Code    int
	Error   string
	// Status is WebhookPending when another attempt is to be made at
	// Next, or WebhookDelivered or WebhookFailed.
	Status string
	Next   time.Time
}

// check refuses a delivery the outbox cannot send.
func (w *Webhook) check(runID string) error {
	switch {
	case w.URL == "":
		return fmt.Errorf("run %q: %w: webhook URL is empty", runID, ErrInvalid)
	case !json.Valid(w.Payload):
		return fmt.Errorf("run %q: %w: webhook payload is not valid JSON", runID, ErrInvalid)
	case w.MaxAttempts < 1:
		return fmt.Errorf("run %q: %w: webhook attempts %d is below 1", runID, ErrInvalid, w.MaxAttempts)
	}
	return nil
}

// webhookRow is the row of w, the delivery of run runID on thread
// threadID, pending and due now.
func (s *DB) webhookRow(w *Webhook, runID, threadID string, threadPK int64) dialect.WebhookRow {
	now := s.now()
	return dialect.WebhookRow{RunID: runID, ThreadPK: threadPK, ThreadID: threadID, URL: w.URL, Payload: string(w.Payload),
		Status: WebhookPending, MaxAttempts: w.MaxAttempts, NextAt: now, CreatedAt: now, UpdatedAt: now}
}

// insertWebhook records w as the delivery of the run being ended in tx.
func (s *DB) insertWebhook(ctx context.Context, tx dialect.WebhookTx, w *Webhook, l dialect.RunLock, runID string) error {
	if err := tx.InsertWebhook(ctx, s.webhookRow(w, runID, l.ThreadID, l.ThreadPK)); err != nil {
		return fmt.Errorf("store: run %q: record its webhook: %w", runID, err)
	}
	return nil
}

// AddWebhook records the webhook delivery of a run that is no longer in
// the store (one rolled back by DiscardRun), due now, on its thread w.ThreadID.
// A run that ends in the store records its delivery with its end
// instead (Finish.Webhook). It fails with ErrNotFound when the thread
// does not exist.
func (s *DB) AddWebhook(ctx context.Context, w Webhook) error {
	if err := checkID("run", w.RunID); err != nil {
		return err
	}
	if err := w.check(w.RunID); err != nil {
		return err
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockThread(ctx, w.ThreadID)
		switch {
		case errors.Is(err, dialect.ErrNoRow):
			return fmt.Errorf("thread %q: %w", w.ThreadID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: run %q: record its webhook: %w", w.RunID, err)
		}
		return tx.InsertWebhook(ctx, s.webhookRow(&w, w.RunID, w.ThreadID, l.PK))
	})
}

// GetWebhook returns the webhook delivery of a run, or ErrNotFound when
// the run asked for none, or its record was swept.
func (s *DB) GetWebhook(ctx context.Context, runID string) (Webhook, error) {
	row, err := s.d.Webhook(ctx, runID)
	switch {
	case errors.Is(err, dialect.ErrNoRow):
		return Webhook{}, fmt.Errorf("webhook of run %q: %w", runID, ErrNotFound)
	case err != nil:
		return Webhook{}, fmt.Errorf("store: webhook of run %q: %w", runID, err)
	}
	return webhookOf(row), nil
}

func webhookOf(r dialect.WebhookRow) Webhook {
	w := Webhook{RunID: r.RunID, ThreadID: r.ThreadID, URL: r.URL, Payload: json.RawMessage(r.Payload), Status: r.Status,
		Attempts: r.Attempts, MaxAttempts: r.MaxAttempts, Code: r.Code, Error: r.Error,
		CreatedAt: fromNanos(r.CreatedAt), UpdatedAt: fromNanos(r.UpdatedAt)}
	if r.Status == WebhookPending {
		w.NextAt = fromNanos(r.NextAt)
	}
	return w
}

// ClaimWebhooks claims at most limit pending deliveries that are due, for
// this store to make their next attempt, and returns them. A delivery is
// due when its next attempt's time has come and no live server holds it:
// a claim lasts hold, and after that it is taken over only when its
// claimer is gone (as ClaimOrphans judges owners: its store was closed,
// its process ended, or its lease expired). However many stores ask at
// once, a delivery goes to one of them. With nothing due it costs one
// read. It fails with ErrClosed once the store is closed.
func (s *DB) ClaimWebhooks(ctx context.Context, limit int, hold time.Duration) ([]Webhook, error) {
	if limit < 1 || hold <= 0 {
		return nil, fmt.Errorf("store: claim webhooks: %w: limit %d and hold %v must be positive", ErrInvalid, limit, hold)
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	at := s.now()
	due, err := s.d.AnyDueWebhook(ctx, at)
	if err != nil || !due {
		return nil, wrapErr("store: claim webhooks", err)
	}
	var claimed []Webhook
	err = s.write(ctx, func(tx dialect.Tx) error {
		var err error
		claimed, err = s.claimDue(ctx, tx, at, limit, hold)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim webhooks: %w", err)
	}
	return claimed, nil
}

// claimDue is ClaimWebhooks' work in its transaction: it claims the due
// deliveries whose claimer, if any, is this store or gone, and pushes the
// others a hold further.
func (s *DB) claimDue(ctx context.Context, tx dialect.Tx, at int64, limit int, hold time.Duration) ([]Webhook, error) {
	rows, err := tx.DueWebhooks(ctx, at, limit)
	if err != nil {
		return nil, err
	}
	var claimed []Webhook
	var live map[int64]bool
	for _, r := range rows {
		owner := s.own.pk
		if r.ClaimedBy != 0 && r.ClaimedBy != s.own.pk {
			if live == nil {
				if live, err = s.liveOwners(ctx, tx); err != nil {
					return nil, err
				}
			}
			if live[r.ClaimedBy] {
				owner = r.ClaimedBy // its claimer is still at it: look again a hold later
			}
		}
		if err := tx.ClaimWebhook(ctx, r.RunID, owner, at+int64(hold), at); err != nil {
			return nil, err
		}
		if owner == s.own.pk {
			claimed = append(claimed, webhookOf(r))
		}
	}
	return claimed, nil
}

// liveOwners returns the owners that are alive, this store among them,
// as dropGoneOwners judges them, without removing the others (recovery
// does that, and ends their runs). A store that may not judge leases yet
// (see mayJudge) counts every owner that has a row as alive.
func (s *DB) liveOwners(ctx context.Context, tx dialect.OwnerTx) (map[int64]bool, error) {
	owners, err := tx.Owners(ctx, s.own.pk, s.leaseNow())
	if err != nil {
		return nil, err
	}
	judge := s.contact == nil || s.contact.mayJudge(time.Now())
	live := map[int64]bool{s.own.pk: true}
	for _, o := range owners {
		live[o.PK] = !judge || !s.ownerGone(o)
	}
	return live, nil
}

// RecordWebhookAttempt records how an attempt at a delivery this store
// claimed went, and gives up its claim: a pending delivery is due again
// at a.Next. It fails with ErrNotFound when the delivery is gone (its
// thread was deleted) and ErrNotClaimed when this store no longer holds
// it.
func (s *DB) RecordWebhookAttempt(ctx context.Context, runID string, a WebhookAttempt) error {
	if a.Status != WebhookPending && a.Status != WebhookDelivered && a.Status != WebhookFailed {
		return fmt.Errorf("run %q: %w: webhook status %q is not one of pending, delivered, failed", runID, ErrInvalid, a.Status)
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		r, err := tx.LockWebhook(ctx, runID)
		switch {
		case errors.Is(err, dialect.ErrNoRow):
			return fmt.Errorf("webhook of run %q: %w", runID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: webhook of run %q: %w", runID, err)
		case r.Status != WebhookPending || r.ClaimedBy != s.own.pk:
			return fmt.Errorf("webhook of run %q: %w", runID, ErrNotClaimed)
		}
		r.Status, r.Attempts, r.Code, r.Error = a.Status, a.Attempt, a.Code, a.Error
		r.ClaimedBy, r.UpdatedAt, r.NextAt = 0, s.now(), 0
		if a.Status == WebhookPending {
			r.NextAt = a.Next.UnixNano()
		}
		return tx.UpdateWebhook(ctx, r)
	})
}

// ReleaseWebhooks gives up this store's claims on pending deliveries, as
// a server that stops does with the attempts it did not finish: they are
// due at once, for any server. It says how many it released.
func (s *DB) ReleaseWebhooks(ctx context.Context) (int, error) {
	var n int
	err := s.write(ctx, func(tx dialect.Tx) error {
		var err error
		n, err = tx.ReleaseWebhooks(ctx, s.own.pk, s.now())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: release webhooks: %w", err)
	}
	return n, nil
}

// sweepBatch is how many ended deliveries one SweepWebhooks transaction
// deletes.
const sweepBatch = 500

// SweepWebhooks deletes the deliveries that ended (delivered or failed)
// before before, and says how many; pending ones are kept whatever their
// age. It deletes a batch per transaction, so that it never holds the
// database long.
func (s *DB) SweepWebhooks(ctx context.Context, before time.Time) (int, error) {
	total := 0
	for {
		var n int
		err := s.write(ctx, func(tx dialect.Tx) error {
			var err error
			n, err = tx.DeleteEndedWebhooks(ctx, before.UnixNano(), sweepBatch)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("store: sweep webhooks: %w", err)
		}
		total += n
		if n < sweepBatch {
			return total, nil
		}
	}
}
