package runs

import (
	"context"
	"fmt"

	"github.com/dawn-go/dawn/internal/crons"
	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
)

// CreateCron gives the cron the caller's user; a cron's ticks run as its
// owner (see StartCrons).
func (s *Service) CreateCron(ctx context.Context, c store.Cron) (store.Cron, error) {
	c.Owner, _ = ownership.Owner(ctx)
	return s.crons.CreateCron(ctx, c)
}

// UpdateCron changes a cron of ctx's user.
func (s *Service) UpdateCron(ctx context.Context, id string, change func(*store.Cron) error) (store.Cron, error) {
	return s.crons.UpdateCron(ctx, id, func(c *store.Cron) error {
		if !ownership.Sees(ctx, c.Owner) {
			return fmt.Errorf("cron %q: %w", id, store.ErrNotFound)
		}
		return change(c)
	})
}

// DeleteCron deletes a cron of ctx's user.
func (s *Service) DeleteCron(ctx context.Context, id string) error {
	if owner, scoped := ownership.Owner(ctx); scoped {
		n, err := s.crons.CountCrons(ctx, store.CronQuery{ID: id, Owner: owner})
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("cron %q: %w", id, store.ErrNotFound)
		}
	}
	return s.crons.DeleteCron(ctx, id)
}

// SearchCrons and CountCrons see ctx's user's crons only.
func (s *Service) SearchCrons(ctx context.Context, q store.CronQuery) ([]store.Cron, error) {
	q.Owner, _ = ownership.Owner(ctx)
	return s.crons.SearchCrons(ctx, q)
}

// CountCrons: see SearchCrons.
func (s *Service) CountCrons(ctx context.Context, q store.CronQuery) (int, error) {
	q.Owner, _ = ownership.Owner(ctx)
	return s.crons.CountCrons(ctx, q)
}

// StartCrons makes st the starter of every tick's run, run as the cron's
// owner: the thread a tick creates is theirs, and a tick on a thread
// that is no longer theirs is refused. The new thread of a cron without
// one is ephemeral unless the cron keeps it (on_run_completed "keep"):
// the store records, as it creates the thread, that any server's sweep
// deletes it once the run is done, so that it does not outlive a server
// that dies before deleting it itself.
func (s *Service) StartCrons(st crons.Starter) { s.cronStarter = ownedStarter{st} }

type ownedStarter struct{ crons.Starter }

func (o ownedStarter) StartCron(ctx context.Context, c store.Cron) error {
	ctx = ownership.As(ctx, c.Owner)
	if c.ThreadID == "" && c.OnRunCompleted != "keep" {
		ctx = runner.WithEphemeralThread(ctx)
	}
	return o.Starter.StartCron(ctx, c)
}

// ServeCrons runs the scheduler of crons with opts while the runner runs,
// when a wire gave the service a starter of their runs (StartCrons).
func (s *Service) ServeCrons(opts crons.Options) {
	if s.cronStarter == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.m.Stopped()
		cancel()
	}()
	go crons.New(s.crons, s.cronStarter, opts).Run(ctx)
}
