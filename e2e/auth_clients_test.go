package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/nodetool"
)

// TestClientsWithBearerJWT: the example app's binary with auth.jwt in its
// dawn.yaml serves the LangGraph SDK and @ag-ui/client sending a user's
// JWT as their bearer token (tools/langgraph/auth.e2e.mjs,
// tools/clients/auth.e2e.mjs): the runs go, the LangGraph run config names
// the user, and a bad token is refused with 401.
func TestClientsWithBearerJWT(t *testing.T) {
	lg := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), requireNodeEnv)
	clients := nodetool.Package(t, "clients", filepath.Join("@ag-ui", "client", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed the client tools but node is not on PATH")
	}
	app := copyExampleApp(t)
	conf, err := os.ReadFile(filepath.Join(app, "dawn.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	conf = append(conf, []byte("\nauth:\n  jwt:\n    secret_env: DAWN_JWT_SECRET\n    audience: dawn\n")...)
	if err := os.WriteFile(filepath.Join(app, "dawn.yaml"), conf, 0o644); err != nil {
		t.Fatal(err)
	}
	const secret = "e2e-jwt-secret"
	url := startDawn(t, buildExampleApp(t), app, "DAWN_JWT_SECRET="+secret, "DAWN_API_KEY=", "DAWN_MODEL=", "DAWN_CORS_ORIGINS=", "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))
	token := authtest.HS256(t, secret, authtest.Claims("ada@example.com", "", "dawn"))
	for _, c := range []struct{ dir, file string }{{lg, "auth.e2e.mjs"}, {clients, "auth.e2e.mjs"}} {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", filepath.Join(c.dir, c.file))
		cmd.Dir = c.dir
		cmd.Env = append(os.Environ(), "DAWN_URL="+url, "DAWN_TOKEN="+token, "DAWN_USER=ada@example.com", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("node --test %s against %s: %v\n%s", filepath.Join(filepath.Base(c.dir), c.file), url, err, out)
		}
		t.Logf("node --test %s:\n%s", c.file, out)
	}
}
