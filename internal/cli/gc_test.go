package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGCMemoryLimit checks that dawn start bounds the heap for the runs
// it may hold, unless GOMEMLIMIT is set, and that dev sets no limit.
func TestTuneGCMemoryLimit(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	env := func(vars map[string]string) *Config {
		return &Config{Env: func(k string) string { return vars[k] }}
	}

	tuneGC(env(nil), 4000)
	if got, want := debug.SetMemoryLimit(-1), int64(64<<20+4000*96<<10); got != want {
		t.Errorf("memory limit for 4000 runs = %d, want %d", got, want)
	}
	if got := debug.SetGCPercent(100); got != serverGCPercent {
		t.Errorf("GC percent = %d, want %d", got, serverGCPercent)
	}
	if got := memoryLimit(1); got != memFloor {
		t.Errorf("memory limit for 1 run = %d, want the floor %d", got, memFloor)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	tuneGC(env(map[string]string{"GOMEMLIMIT": "2GiB"}), 4000)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the limit was changed to %d", got)
	}
	tuneGC(env(nil), 0)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with no cap on runs (dawn dev), the limit was changed to %d", got)
	}
}
