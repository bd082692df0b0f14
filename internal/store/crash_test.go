//go:build unix

package store

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/thread"
)

// crashEnv, when set to a path, makes TestMain write steps to that store and
// then kill its own process, as a crash would.
const crashEnv = "DAWN_STORE_CRASH_PATH"

// crashSteps is how many steps the crashing child saves.
const crashSteps = 5

func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// crashChild saves crashSteps steps of a run, leaves the run running and is
// killed with SIGKILL: no Close, no WAL checkpoint, no deferred code.
func crashChild(path string) {
	ctx := context.Background()
	s, err := Open(path)
	if err != nil {
		os.Exit(3)
	}
	if _, err := s.CreateThread(ctx, "th", nil); err != nil {
		os.Exit(4)
	}
	if err := startRun(ctx, s, Run{ID: "run-1", ThreadID: "th", Route: "/support/[tenant]"}); err != nil {
		os.Exit(5)
	}
	for step := 1; step <= crashSteps; step++ {
		if err := s.SaveStep(ctx, crashStep(step)); err != nil {
			os.Exit(6)
		}
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// crashStep is step n of the run that crashes: sampleStep plus a field
// that grows by 8 elements per step, kept in parts.
func crashStep(n int) Step {
	st := sampleStep("th", "run-1", n, int64(3*n-2))
	st.Values = thread.State{"todos": todos, "notes": growingValue(8 * n)}
	return st
}

// expectedAfterCrash is the checkpoint the crashing child leaves, built by
// the same steps in memory.
func expectedAfterCrash(t *testing.T) Checkpoint {
	ctx := context.Background()
	s := openTest(t, ":memory:")
	newRun(t, s, "th", "run-1")
	for step := 1; step <= crashSteps; step++ {
		must(t, s.SaveStep(ctx, crashStep(step)))
	}
	cp, err := s.Latest(ctx, "th")
	must(t, err)
	return cp
}

func TestCrashKeepsLastStep(t *testing.T) {
	tests := []struct {
		name  string
		crash func(t *testing.T, path string)
	}{
		{"close without finishing", func(t *testing.T, path string) {
			ctx := context.Background()
			s, err := Open(path)
			must(t, err)
			newRun(t, s, "th", "run-1")
			for step := 1; step <= crashSteps; step++ {
				must(t, s.SaveStep(ctx, crashStep(step)))
			}
			must(t, s.Close())
		}},
		{"process killed", func(t *testing.T, path string) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashEnv+"="+path)
			err := cmd.Run()
			status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !status.Signaled() || status.Signal() != syscall.SIGKILL {
				t.Fatalf("child did not die by SIGKILL: %v (exit code %d)", err, cmd.ProcessState.ExitCode())
			}
			if _, err := os.Stat(path + "-wal"); err != nil {
				t.Logf("no WAL file left behind: %v", err)
			}
		}},
	}
	want := expectedAfterCrash(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "dawn.db")
			tt.crash(t, path)

			s := openTest(t, path)
			n, err := s.RecoverInterrupted(ctx)
			must(t, err)
			if n != 1 {
				t.Errorf("RecoverInterrupted = %d, want 1", n)
			}
			got, err := s.Latest(ctx, "th")
			must(t, err)
			want.UpdatedAt = got.UpdatedAt
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after the crash:\n got %+v\nwant %+v", got, want)
			}
			checkValues(t, "after the crash", got.Values, crashStep(crashSteps).Values)
			r, err := s.GetRun(ctx, "run-1")
			must(t, err)
			th, err := s.GetThread(ctx, "th")
			must(t, err)
			if r.Status != RunInterrupted || th.Status != StatusInterrupted {
				t.Errorf("run %s, thread %s; want both interrupted", r.Status, th.Status)
			}
			// The thread goes on from the saved step.
			must(t, startRun(ctx, s, Run{ID: "run-2", ThreadID: "th"}))
			must(t, s.SaveStep(ctx, sampleStep("th", "run-2", crashSteps+1, 1)))
			evs, err := s.Events(ctx, "run-1", 0)
			must(t, err)
			if len(evs) != 3*crashSteps {
				t.Errorf("%d events of the cut run kept, want %d", len(evs), 3*crashSteps)
			}
		})
	}
}
