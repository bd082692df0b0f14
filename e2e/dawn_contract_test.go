package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// TestDawnContractClient runs tools/clients/dawn-contract.test.mjs, a fetch
// client written to Dawn's documented HTTP contract, against the stock
// binary (`dawn start`) on a route whose model is aimock, paced so that the
// client can act on a run in flight (cancel, run_in_flight, run_cancelled).
func TestDawnContractClient(t *testing.T) {
	dir := nodetool.Package(t, "clients", filepath.Join("@ag-ui", "client", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(requireNodeEnv) == "1" {
			t.Fatalf("node is not on PATH: %v", err)
		}
		t.Skipf("node is not on PATH: %v", err)
	}
	mock := startAimockPaced(t, "testdata/dawn_contract.json", 100, 10)
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "chat", "agent.md"), "---\nmodel: openai:gpt-4o-mini\ndescription: chat\n---\nYou chat.\n")
	const key = "contract-key"
	url := startDawn(t, buildDawn(t), app, "OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY="+key, "DAWN_MODEL=", "DAWN_CORS_ORIGINS=")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", filepath.Join(dir, "dawn-contract.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_URL="+url, "DAWN_API_KEY="+key, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test tools/clients/dawn-contract.test.mjs against %s: %v\n%s", url, err, out)
	}
	t.Logf("node --test tools/clients/dawn-contract.test.mjs:\n%s", out)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
