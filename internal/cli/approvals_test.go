package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
)

// TestApprovalsCommand: dawn approvals lists a server's remembered
// decisions (the service key every user's, a user's token their own) and
// revokes one, which is then gone.
func TestApprovalsCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "dawn.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	err = st.SetAppValues(context.Background(), map[string]json.RawMessage{
		runner.UserKey("alice", "approval.always.release"): json.RawMessage(`true`),
		runner.UserKey("bob", "approval.always.deploy"):    json.RawMessage(`true`),
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := authApp(t, "auth:\n  jwt:\n    secret_env: DAWN_JWT_SECRET\n")
	env := offlineEnv("DAWN_JWT_SECRET=s3cret", "DAWN_API_KEY=svc", "DAWN_STORE="+db)
	s := startDawn(t, env, time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	alice := authtest.HS256(t, "s3cret", authtest.Claims("alice", "", ""))

	res := runDawnEnv(t, offlineEnv("DAWN_API_KEY=svc"), "approvals", "list", "--url", s.url)
	if res.code != 0 || !strings.Contains(res.stdout, "alice") || !strings.Contains(res.stdout, "bob") || !strings.Contains(res.stdout, "approval.always.release") {
		t.Fatalf("list with the service key: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runDawnEnv(t, offlineEnv(), "approvals", "list", "--url", s.url, "--key", alice)
	if res.code != 0 || !strings.Contains(res.stdout, "approval.always.release") || strings.Contains(res.stdout, "bob") {
		t.Fatalf("list as alice: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runDawnEnv(t, offlineEnv(), "approvals", "revoke", "approval.always.release", "--url", s.url, "--key", alice)
	if res.code != 0 || !strings.Contains(res.stdout, "revoked approval.always.release") {
		t.Fatalf("revoke as alice: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runDawnEnv(t, offlineEnv("DAWN_API_KEY=svc"), "approvals", "revoke", "approval.always.release", "--user", "alice", "--url", s.url)
	if res.code != 1 || !strings.Contains(res.stderr, "404") {
		t.Fatalf("revoking it again: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runDawnEnv(t, offlineEnv("DAWN_API_KEY=svc"), "approvals", "list", "--url", s.url)
	if strings.Contains(res.stdout, "alice") || !strings.Contains(res.stdout, "bob") {
		t.Fatalf("list after the revoke:\n%s", res.stdout)
	}
	if res := runDawnEnv(t, offlineEnv(), "approvals", "list", "--url", s.url); res.code != 1 || !strings.Contains(res.stderr, "401") {
		t.Fatalf("list with no key: exit %d\n%s", res.code, res.stderr)
	}
}
