package cli

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The garbage collector's targets for the servers (dawn start and dawn
// dev) when GOGC is not set. A server's live heap is small, so Go's
// default of 100 collects very often under load: with 400 the load tool's
// sequential workload spent about 15% less CPU per run. But the heap's
// floor grows with the target (4 MiB × GOGC/100), which cost about 9 MiB
// of RSS at idle. So the target follows the allocation rate (gcTuner):
// busyGCPercent while the server allocates, idleGCPercent once it is
// quiet. GOGC and GOMEMLIMIT still win when set.
const (
	idleGCPercent = 100
	busyGCPercent = 400
)

// While busy, the heap may grow by at most busyHeadroom between two
// collections (the target is lowered as the live heap grows, down to
// minGCPercent): with many runs held, the live heap is large and a fixed
// 400 would let it grow to five times what the runs hold; a small heap
// (a few runs at a time) keeps 400 and its lower CPU.
const (
	busyHeadroom = 64 << 20
	minGCPercent = 25
)

// The allocation rates, in bytes a second, between which the tuner
// switches: above busyAllocRate the server is working (a run allocates
// tens of KiB; a few hundred runs a second is tens of MiB a second);
// below idleAllocRate for idleAfter it is quiet.
const (
	busyAllocRate = 8 << 20
	idleAllocRate = 1 << 20
	idleAfter     = 5 * time.Second
	tuneEvery     = time.Second
)

// Memory for the soft limit of dawn start: the process's base, and what a
// run in flight holds (goroutines, connection buffers, its event log and
// model call; the load tool's --inflight measured about 50 KiB), with
// room for the garbage between collections.
const (
	memBase   = 64 << 20
	memPerRun = 96 << 10
	memFloor  = 256 << 20
)

// tuneGC sets the collector up for a server until ctx ends: unless the
// environment sets GOGC, the target follows the allocation rate (see
// gcTuner); and, when maxRuns caps the runs in flight and GOMEMLIMIT is not
// set, a soft memory limit sized for that many runs (memoryLimit). With a
// target of 400 alone, a heap of many runs would grow to five times what
// they hold before a collection; the limit makes the collector run sooner
// once the heap nears it, so RSS follows the runs held, not the
// multiplier.
func tuneGC(ctx context.Context, cfg *Config, maxRuns int) {
	if cfg.Env("GOGC") == "" {
		debug.SetGCPercent(idleGCPercent)
		go runGCTuner(ctx, tuneEvery)
	}
	if cfg.Env("GOMEMLIMIT") == "" && maxRuns > 0 {
		debug.SetMemoryLimit(memoryLimit(maxRuns))
	}
}

// runGCTuner samples the bytes allocated every interval and applies the
// tuner's target when it changes, until ctx ends.
func runGCTuner(ctx context.Context, interval time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}}
	value := func(i int) uint64 {
		if sample[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[i].Value.Uint64()
	}
	read := func() uint64 {
		metrics.Read(sample)
		return value(0)
	}
	t := gcTuner{percent: idleGCPercent}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := read()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := read()
		rate := float64(now-last) / interval.Seconds()
		last = now
		// What the collector's target scales: the live heap and the
		// goroutines' stacks.
		live := value(1) + value(2)
		if p, changed := t.observe(rate, live, interval); changed {
			debug.SetGCPercent(p)
		}
	}
}

// gcTuner decides the collector's target from the allocation rate: it
// moves to busyPercent as soon as the rate passes busyAllocRate, and back
// to idleGCPercent once the rate has stayed under idleAllocRate for
// idleAfter, so a pause between bursts does not flip it.
type gcTuner struct {
	percent int
	quiet   time.Duration
}

// observe takes one sample (the rate over the last interval, and the
// bytes the collector's target scales: live heap and stacks) and returns
// the target, and whether it changed.
func (t *gcTuner) observe(rate float64, live uint64, interval time.Duration) (int, bool) {
	was := t.percent
	switch {
	case rate >= busyAllocRate:
		t.percent, t.quiet = busyPercent(live), 0
	case rate < idleAllocRate:
		t.quiet += interval
		if t.quiet >= idleAfter {
			t.percent = idleGCPercent
		}
	default:
		t.quiet = 0
	}
	return t.percent, t.percent != was
}

// busyPercent is the busy target for live bytes: busyGCPercent, lowered
// so that the heap grows by at most busyHeadroom, never below
// minGCPercent.
func busyPercent(live uint64) int {
	if live == 0 {
		return busyGCPercent
	}
	p := min(busyGCPercent, max(minGCPercent, busyHeadroom*100/live))
	return int(p / minGCPercent * minGCPercent) // in steps, so that it moves seldom
}

// memoryLimit is the soft memory limit for a server of at most maxRuns runs
// in flight: memBase plus memPerRun a run, at least memFloor. It is soft:
// past it the collector works harder (at most about half the CPU), it
// never fails an allocation.
func memoryLimit(maxRuns int) int64 {
	return max(memFloor, memBase+int64(maxRuns)*memPerRun)
}
