package pgtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// TestDatabase starts the shared cluster, makes two databases and checks
// that each takes queries and that they are distinct.
func TestDatabase(t *testing.T) {
	a, b := Database(t), Database(t)
	if a == b {
		t.Fatalf("two databases share a URL: %s", a)
	}
	ctx := context.Background()
	for _, dsn := range []string{a, b} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var one int
		if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("SELECT 1 on %s: %d, %v", dsn, one, err)
		}
		conn.Close(ctx)
	}
}

// TestSweepStopsOrphans: a cluster whose starting process is gone (killed
// before Stop) is stopped and removed by the next Start's sweep.
func TestSweepStopsOrphans(t *testing.T) {
	Shared(t) // skips without the binaries
	c, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, ownerFile), []byte(strconv.Itoa(dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	sweep()
	select {
	case <-c.exit:
	case <-time.After(30 * time.Second):
		t.Fatal("the orphaned server still runs 30s after the sweep")
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("the orphaned cluster's folder is still there: %v", err)
	}
}
