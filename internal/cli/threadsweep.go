package cli

import (
	"context"
	"fmt"
	"time"
)

// defaultThreadSweep is how often a server deletes the threads whose TTL
// has run out, unless DAWN_THREAD_SWEEP_INTERVAL says otherwise. An
// expired thread stays readable until a sweep deletes it; the sweep costs
// one read of an index when nothing has expired.
const defaultThreadSweep = time.Minute

// threadSweepInterval reads DAWN_THREAD_SWEEP_INTERVAL, a Go duration.
func threadSweepInterval(cfg *Config) (time.Duration, error) {
	v := cfg.Env("DAWN_THREAD_SWEEP_INTERVAL")
	if v == "" {
		return defaultThreadSweep, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("DAWN_THREAD_SWEEP_INTERVAL=%q: want a positive duration, such as 1m or 30s", v)
	}
	return d, nil
}

// sweepThreadsLoop deletes the store's threads whose TTL ran out every
// interval until ctx ends.
func (s *stack) sweepThreadsLoop(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = defaultThreadSweep
	}
	s.sweepLoop(ctx, every, "threads", s.store.SweepThreads)
}
