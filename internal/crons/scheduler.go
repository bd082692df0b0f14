package crons

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/dawn-go/dawn/internal/store"
)

// Starter starts the run of one tick of a cron. The wire that keeps
// crons implements it over the runner, as it starts its other runs.
type Starter interface {
	StartCron(ctx context.Context, c store.Cron) error
}

// DefaultInterval is how often a Scheduler looks for due ticks.
const DefaultInterval = 5 * time.Second

// Options configure a Scheduler.
type Options struct {
	// Interval is how often it looks for due ticks (DefaultInterval
	// when 0): a tick fires up to that long after its time.
	Interval time.Duration
	// Seconds reads schedules with an optional leading seconds field. It
	// is a test-only setting, so that a test sees ticks seconds apart.
	Seconds bool
	// Now is the clock (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
}

// Scheduler fires the due ticks of the crons in a store. Every server on
// a database runs one; the store's ClaimCronTick gives each tick to one
// of them.
type Scheduler struct {
	store store.Crons
	start Starter
	opts  Options
}

// New returns a Scheduler of the crons in st, starting their runs with
// start.
func New(st store.Crons, start Starter, opts Options) *Scheduler {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Scheduler{store: st, start: start, opts: opts}
}

// Run fires due ticks every Interval until ctx ends or the store closes.
func (s *Scheduler) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		if _, err := s.Fire(ctx); errors.Is(err, store.ErrClosed) {
			return
		} else if err != nil && ctx.Err() == nil {
			s.opts.Logger.Warn("crons: cannot read the due crons; trying again", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// dueBatch bounds the crons one pass reads.
const dueBatch = 100

// Fire fires every tick due now once: for each due cron it claims the
// tick, moving the cron to its first tick after now, and starts the run
// when the claim is its own. Ticks missed while no server ran are not
// fired one by one: the cron fires once, then waits for its next tick.
// It says how many runs it started.
func (s *Scheduler) Fire(ctx context.Context) (int, error) {
	now := s.opts.Now()
	due, err := s.store.DueCrons(ctx, now, dueBatch)
	if err != nil {
		return 0, err
	}
	fired := 0
	for _, c := range due {
		if s.fire(ctx, c, now) {
			fired++
		}
	}
	return fired, nil
}

// fire claims c's due tick and, when it is this scheduler's, starts its
// run.
func (s *Scheduler) fire(ctx context.Context, c store.Cron, now time.Time) bool {
	log := s.opts.Logger.With("cron", c.ID)
	var next time.Time
	sched, err := Parse(c.Schedule, c.Timezone, s.opts.Seconds)
	if err != nil {
		log.Error("crons: the cron's schedule cannot be read; it fires this tick and no more", "err", err)
	} else {
		next = sched.Next(now)
	}
	if !c.EndTime.IsZero() && next.After(c.EndTime) {
		next = time.Time{}
	}
	won, err := s.store.ClaimCronTick(ctx, c.ID, c.NextRunAt, next)
	if err != nil {
		log.Warn("crons: cannot claim a tick; trying again", "err", err)
		return false
	}
	if !won || (!c.EndTime.IsZero() && c.NextRunAt.After(c.EndTime)) {
		return false
	}
	if err := s.start.StartCron(ctx, c); err != nil {
		log.Warn("crons: the tick's run did not start", "tick", c.NextRunAt, "err", err)
		return false
	}
	log.Info("crons: cron tick started its run", "tick", c.NextRunAt, "assistant", c.AssistantID, "thread", c.ThreadID)
	return true
}
