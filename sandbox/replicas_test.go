package sandbox_test

import (
	"testing"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// TestRunBashFilesAcrossReplicas: two servers share one Postgres
// database, as replicas behind a balancer do; a thread's first turn on
// replica A writes a file with a command, and its next turns on replica B
// read it with readFile and with a command in B's own, cold box, and B's
// writes are what A's box sees on the turn after.
func TestRunBashFilesAcrossReplicas(t *testing.T) {
	dsn := pgtest.Database(t)
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			p.require(t)
			dir := sandboxApp(t, p, "")
			a, b := serve(t, dir, dsn), serve(t, dir, dsn)
			thread := "rep-" + p.name
			if r := a.bash(t, thread, "echo from-a > a.txt && echo ok"); r.ExitCode != 0 || r.Stdout != "ok\n" {
				t.Fatalf("replica A's command: %+v", r)
			}
			if got := b.readFile(t, thread, "a.txt"); got != "from-a\n" {
				t.Fatalf("replica B's readFile of what A's command wrote: %q", got)
			}
			if r := b.bash(t, thread, "cat a.txt && echo from-b > b.txt"); r.ExitCode != 0 || r.Stdout != "from-a\n" {
				t.Fatalf("replica B's box: %+v", r)
			}
			if r := a.bash(t, thread, "cat b.txt"); r.ExitCode != 0 || r.Stdout != "from-b\n" {
				t.Fatalf("replica A's warm box after B's turn: %+v", r)
			}
		})
	}
}
