package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Cron is a run started on a schedule: each tick of Schedule (five
// fields, in Timezone) starts a run of Payload, on ThreadID or, when it
// is empty, on a new thread. The store keeps the schedule as text; the
// scheduler (package crons) computes the ticks.
type Cron struct {
	ID, AssistantID, ThreadID string
	Schedule, Timezone        string
	// OnRunCompleted is what happens to a new thread once its run ends:
	// "delete" or "keep" ("" for a cron on a thread).
	OnRunCompleted string
	// Payload is the run request each tick starts; Metadata a JSON
	// object.
	Payload, Metadata json.RawMessage
	// NextRunAt is the tick the cron fires at next; zero once it has
	// ended. EndTime, when not zero, is when it ends.
	NextRunAt, EndTime   time.Time
	CreatedAt, UpdatedAt time.Time
	Enabled              bool
	// Owner is the user the cron belongs to ("" for none), set when it
	// is created and kept by every update.
	Owner string
}

// CronQuery selects crons. SortBy is "cron_id", "assistant_id",
// "thread_id", "created_at" (default), "updated_at" or "next_run_date";
// SortOrder "asc" (default) or "desc". Limit defaults to 10, at most
// 1000.
type CronQuery struct {
	AssistantID, ThreadID string
	// ID, when not "", keeps the cron with that id; Owner, when not "",
	// the crons that user owns.
	ID, Owner         string
	Enabled           *bool
	SortBy, SortOrder string
	Limit, Offset     int
}

func cronOf(r dialect.CronRow) Cron {
	return Cron{ID: r.ID, AssistantID: r.AssistantID, ThreadID: r.ThreadID, Schedule: r.Schedule, Timezone: r.Timezone,
		OnRunCompleted: r.OnRunCompleted, Payload: json.RawMessage(r.Payload), Metadata: json.RawMessage(r.Metadata),
		NextRunAt: fromNanos(r.NextRunAt), EndTime: fromNanos(r.EndTime),
		CreatedAt: fromNanos(r.CreatedAt), UpdatedAt: fromNanos(r.UpdatedAt), Enabled: r.Enabled, Owner: r.Owner}
}

// row checks c and returns it as stored.
func (c Cron) row() (dialect.CronRow, error) {
	if err := checkID("cron", c.ID); err != nil {
		return dialect.CronRow{}, err
	}
	if c.AssistantID == "" || strings.TrimSpace(c.Schedule) == "" {
		return dialect.CronRow{}, fmt.Errorf("cron %q: %w: assistant_id and schedule must not be empty", c.ID, ErrInvalid)
	}
	meta, err := compactObject(c.Metadata)
	if err != nil {
		return dialect.CronRow{}, fmt.Errorf("cron %q: metadata: %w", c.ID, err)
	}
	if !json.Valid(c.Payload) {
		return dialect.CronRow{}, fmt.Errorf("cron %q: %w: the payload is not JSON", c.ID, ErrInvalid)
	}
	return dialect.CronRow{ID: c.ID, AssistantID: c.AssistantID, ThreadID: c.ThreadID, Schedule: c.Schedule, Timezone: c.Timezone,
		OnRunCompleted: c.OnRunCompleted, Payload: string(c.Payload), Metadata: meta,
		NextRunAt: nanos(c.NextRunAt), EndTime: nanos(c.EndTime),
		CreatedAt: nanos(c.CreatedAt), UpdatedAt: nanos(c.UpdatedAt), Enabled: c.Enabled, Owner: c.Owner}, nil
}

// nanos is t in Unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// CreateCron stores a new cron, stamped with the store's clock. It fails
// with ErrExists when the id is taken, ErrInvalid for a field it cannot
// keep.
func (s *DB) CreateCron(ctx context.Context, c Cron) (Cron, error) {
	now := s.now()
	c.CreatedAt, c.UpdatedAt = fromNanos(now), fromNanos(now)
	row, err := c.row()
	if err != nil {
		return Cron{}, err
	}
	err = s.write(ctx, func(tx dialect.Tx) error {
		err := tx.InsertCron(ctx, row)
		if errors.Is(err, dialect.ErrTaken) {
			return fmt.Errorf("cron %q: %w", c.ID, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("store: create cron %q: %w", c.ID, err)
		}
		return checkOwned(ctx, tx, dialect.OwnedCrons, c.Owner, s.quota.get().Crons)
	})
	if err != nil {
		return Cron{}, err
	}
	return cronOf(row), nil
}

// UpdateCron changes a cron in one transaction: change gets the cron as
// stored and edits it (an error from it undoes nothing and is returned
// as it is). ID and CreatedAt stay. ErrNotFound when there is no such
// cron.
func (s *DB) UpdateCron(ctx context.Context, id string, change func(*Cron) error) (Cron, error) {
	var out Cron
	err := s.write(ctx, func(tx dialect.Tx) error {
		old, err := tx.Cron(ctx, id)
		if errors.Is(err, dialect.ErrNoRow) {
			return fmt.Errorf("cron %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: read cron %q: %w", id, err)
		}
		c := cronOf(old)
		if err := change(&c); err != nil {
			return err
		}
		c.ID, c.CreatedAt, c.UpdatedAt = old.ID, fromNanos(old.CreatedAt), fromNanos(s.now())
		row, err := c.row()
		if err != nil {
			return err
		}
		if err := tx.UpdateCron(ctx, row); err != nil {
			return fmt.Errorf("store: update cron %q: %w", id, err)
		}
		out = cronOf(row)
		return nil
	})
	return out, err
}

// DeleteCron deletes a cron; ErrNotFound when there is no such cron.
func (s *DB) DeleteCron(ctx context.Context, id string) error {
	return s.write(ctx, func(tx dialect.Tx) error {
		err := tx.DeleteCron(ctx, id)
		if errors.Is(err, dialect.ErrNoRow) {
			return fmt.Errorf("cron %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: delete cron %q: %w", id, err)
		}
		return nil
	})
}

// SearchCrons returns one page of the crons q selects.
func (s *DB) SearchCrons(ctx context.Context, q CronQuery) ([]Cron, error) {
	f, err := q.filter()
	if err != nil {
		return nil, err
	}
	return s.crons(ctx, f)
}

// CountCrons counts the crons q selects; its page and sort are ignored.
func (s *DB) CountCrons(ctx context.Context, q CronQuery) (int, error) {
	q.SortBy, q.SortOrder = "", ""
	f, err := q.filter()
	if err != nil {
		return 0, err
	}
	n, err := s.d.CountCrons(ctx, f)
	if err != nil {
		return 0, fmt.Errorf("store: count crons: %w", err)
	}
	return n, nil
}

// ErrClosed is returned by DueCrons and ClaimWebhooks once the store is
// closed: a scheduler or a webhook sender stops on it.
var ErrClosed = dialect.ErrClosed

// DueCrons returns the enabled crons whose next tick is at or before at,
// earliest first, at most limit of them.
func (s *DB) DueCrons(ctx context.Context, at time.Time, limit int) ([]Cron, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return s.crons(ctx, dialect.CronFilter{DueBy: nanos(at), Sort: "next_run_date", Limit: limit})
}

// ClaimCronTick moves a cron's next tick from tick to next (zero: the
// cron has ended) if it still is tick, and reports whether it did. Of
// any number of callers claiming the same tick, in any number of
// processes sharing the database, exactly one gets true: that one fires
// the tick.
func (s *DB) ClaimCronTick(ctx context.Context, id string, tick, next time.Time) (bool, error) {
	var won bool
	err := s.write(ctx, func(tx dialect.Tx) error {
		var err error
		won, err = tx.ClaimCron(ctx, id, nanos(tick), nanos(next), s.now())
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: claim a tick of cron %q: %w", id, err)
	}
	return won, nil
}

func (s *DB) crons(ctx context.Context, f dialect.CronFilter) ([]Cron, error) {
	rows, err := s.d.Crons(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("store: read crons: %w", err)
	}
	out := make([]Cron, len(rows))
	for i, r := range rows {
		out[i] = cronOf(r)
	}
	return out, nil
}

// filter checks q, or fails with ErrInvalid naming the field.
func (q CronQuery) filter() (dialect.CronFilter, error) {
	f := dialect.CronFilter{ID: q.ID, AssistantID: q.AssistantID, ThreadID: q.ThreadID, Owner: q.Owner, Enabled: q.Enabled,
		Sort: q.SortBy, Limit: q.Limit, Offset: max(q.Offset, 0)}
	var err error
	f.Sort, f.Desc, f.Limit, err = order{by: q.SortBy, dir: q.SortOrder, limit: q.Limit}.check(
		[]string{"cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"}, "created_at", false)
	if err != nil {
		return f, err
	}
	return f, nil
}
