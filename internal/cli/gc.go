package cli

import (
	"runtime/debug"
)

// serverGCPercent is the garbage collector's target for the servers (dawn
// start and dawn dev) when GOGC is not set. A server's live heap is small,
// so Go's default of 100 collects very often: with 400 the load tool's
// sequential workload spent about 15% less CPU per run, for about 11 MiB
// more RSS after 1,000 threads. GOGC and GOMEMLIMIT still win when set.
const serverGCPercent = 400

// Memory for the soft limit of dawn start: the process's base, and what a
// run in flight holds (goroutines, connection buffers, its event log and
// model call; the load tool's --inflight measured about 50 KiB), with
// room for the garbage between collections.
const (
	memBase   = 64 << 20
	memPerRun = 96 << 10
	memFloor  = 256 << 20
)

// tuneGC applies serverGCPercent unless the environment sets GOGC, and,
// when maxRuns caps the runs in flight and GOMEMLIMIT is not set, a soft
// memory limit sized for that many runs (memoryLimit). With GOGC at 400
// alone, a heap of many runs would grow to five times what they hold
// before a collection; the limit makes the collector run sooner once the
// heap nears it, so RSS follows the runs held, not the multiplier.
func tuneGC(cfg *Config, maxRuns int) {
	if cfg.Env("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	if cfg.Env("GOMEMLIMIT") == "" && maxRuns > 0 {
		debug.SetMemoryLimit(memoryLimit(maxRuns))
	}
}

// memoryLimit is the soft memory limit for a server of at most maxRuns runs
// in flight: memBase plus memPerRun a run, at least memFloor. It is soft:
// past it the collector works harder (at most about half the CPU), it
// never fails an allocation.
func memoryLimit(maxRuns int) int64 {
	return max(memFloor, memBase+int64(maxRuns)*memPerRun)
}
