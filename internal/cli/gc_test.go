package cli

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestTuneGCMemoryLimit checks that dawn start bounds the heap for the runs
// it may hold, unless GOMEMLIMIT is set, and that dev sets no limit.
func TestTuneGCMemoryLimit(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env := func(vars map[string]string) *Config {
		return &Config{Env: func(k string) string { return vars[k] }}
	}

	debug.SetGCPercent(250)
	tuneGC(ctx, env(nil), 4000)
	if got, want := debug.SetMemoryLimit(-1), int64(64<<20+4000*96<<10); got != want {
		t.Errorf("memory limit for 4000 runs = %d, want %d", got, want)
	}
	if got := gcPercent(); got != idleGCPercent {
		t.Errorf("GC percent at start = %d, want the idle target %d", got, idleGCPercent)
	}
	if got := memoryLimit(1); got != memFloor {
		t.Errorf("memory limit for 1 run = %d, want the floor %d", got, memFloor)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	debug.SetGCPercent(250)
	tuneGC(ctx, env(map[string]string{"GOMEMLIMIT": "2GiB", "GOGC": "250"}), 4000)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the limit was changed to %d", got)
	}
	if got := gcPercent(); got != 250 {
		t.Errorf("with GOGC set, the target was changed to %d", got)
	}
	tuneGC(ctx, env(nil), 0)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with no cap on runs (dawn dev), the limit was changed to %d", got)
	}
}

// TestGCTunerFollowsAllocationRate checks the target's moves: up at once
// when the server allocates fast, down only after a quiet spell, and not
// down during a short pause between bursts.
func TestGCTunerFollowsAllocationRate(t *testing.T) {
	tu := gcTuner{percent: idleGCPercent}
	step := time.Second
	if p, changed := tu.observe(idleAllocRate*2, 0, step); changed || p != idleGCPercent {
		t.Fatalf("a moderate rate moved the target to %d", p)
	}
	if p, changed := tu.observe(busyAllocRate, 0, step); !changed || p != busyGCPercent {
		t.Fatalf("a busy rate gave %d (changed %v), want %d", p, changed, busyGCPercent)
	}
	for range int(idleAfter/step) - 1 {
		if p, _ := tu.observe(0, 0, step); p != busyGCPercent {
			t.Fatalf("a pause shorter than %v moved the target to %d", idleAfter, p)
		}
	}
	if p, _ := tu.observe(busyAllocRate*4, 0, step); p != busyGCPercent {
		t.Fatalf("a burst after a pause gave %d", p)
	}
	var p int
	var changed bool
	for range int(idleAfter / step) {
		p, changed = tu.observe(0, 0, step)
	}
	if !changed || p != idleGCPercent {
		t.Fatalf("after %v quiet the target is %d (changed %v), want %d", idleAfter, p, changed, idleGCPercent)
	}
}

// TestGCTunerRaisesTargetUnderAllocation runs the tuner against the real
// runtime: allocating fast raises the target to busyGCPercent.
func TestGCTunerRaisesTargetUnderAllocation(t *testing.T) {
	percent := debug.SetGCPercent(idleGCPercent)
	t.Cleanup(func() { debug.SetGCPercent(percent) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go runGCTuner(ctx, 50*time.Millisecond)
	var sink [][]byte
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for range 64 {
			sink = append(sink, make([]byte, 64<<10))
		}
		sink = sink[:0]
		if gcPercent() == busyGCPercent {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the target stayed at %d while allocating fast", gcPercent())
}

// gcPercent reads the collector's target without changing it.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestGCTunerBoundsHeadroomOfLargeHeaps checks that the busy target keeps
// 400 for a small heap and lowers it as the live heap grows (many runs
// held), so that a collection comes after at most busyHeadroom more.
func TestGCTunerBoundsHeadroomOfLargeHeaps(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, busyGCPercent},
		{8 << 20, busyGCPercent},
		{16 << 20, busyGCPercent},
		{64 << 20, 100},
		{256 << 20, 25},
		{800 << 20, minGCPercent},
	} {
		if got := busyPercent(c.live); got != c.want {
			t.Errorf("busy target for %d MiB live = %d, want %d", c.live>>20, got, c.want)
		}
		tu := gcTuner{percent: idleGCPercent}
		if got, _ := tu.observe(busyAllocRate, c.live, time.Second); got != c.want {
			t.Errorf("tuner's busy target for %d MiB live = %d, want %d", c.live>>20, got, c.want)
		}
		if got := uint64(busyPercent(c.live)) * c.live / 100; c.want > minGCPercent && got > busyHeadroom {
			t.Errorf("%d MiB live may grow by %d MiB before a collection, over %d MiB", c.live>>20, got>>20, busyHeadroom>>20)
		}
	}
}
