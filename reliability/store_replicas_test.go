//go:build unix

package reliability

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
	"github.com/dawn-go/dawn/internal/pgtest"
)

// TestStoreAcrossReplicas runs the LangGraph SDK's store client
// (tools/langgraph/store.test.mjs) against two `dawn start` replicas of one
// Postgres database: every call of client.store works there, and an item
// put through replica A is found by searchItems on replica B.
func TestStoreAcrossReplicas(t *testing.T) {
	dir := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), "DAWN_REQUIRE_NODE")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed tools/langgraph but node is not on PATH")
	}
	dsn := pgtest.Database(t)
	app, env, _ := heldApp(t)
	reps := startReplicas(t, 2, app, dsn, env)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-timeout=60000", "store.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_URL="+reps[0].url, "DAWN_REPLICA_URL="+reps[1].url, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test store.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the store client tests failed: %v (their output is above)", err)
	}
	pass := regexp.MustCompile(`(?m)^ℹ pass (\d+)`).FindSubmatch(out)
	skipped := regexp.MustCompile(`(?m)^ℹ skipped (\d+)`).FindSubmatch(out)
	if pass == nil || string(pass[1]) == "0" || skipped == nil || string(skipped[1]) != "0" {
		t.Fatalf("node --test did not pass every store test (the replica one may have been skipped)")
	}
}
