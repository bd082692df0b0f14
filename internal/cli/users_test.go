package cli_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/auth/authtest"
)

// TestUsersForgetCommand: dawn users forget erases a user's threads on a
// running server with the service key, says what it erased, finds
// nothing the second time, and is refused a user's token.
func TestUsersForgetCommand(t *testing.T) {
	dir := authApp(t, "auth:\n  jwt:\n    secret_env: DAWN_JWT_SECRET\n")
	env := offlineEnv("DAWN_JWT_SECRET=s3cret", "DAWN_API_KEY=svc")
	s := startDawn(t, env, time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	alice := authtest.HS256(t, "s3cret", authtest.Claims("alice", "", ""))
	req, _ := http.NewRequest(http.MethodPost, s.url+"/threads", strings.NewReader(`{"thread_id":"alice-1"}`))
	req.Header.Set("Authorization", "Bearer "+alice)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("alice's thread: %v %v", err, resp)
	}
	resp.Body.Close()

	if res := runDawnEnv(t, offlineEnv(), "users", "forget", "alice", "--url", s.url, "--key", alice); res.code != 1 || !strings.Contains(res.stderr, "403") {
		t.Fatalf("forget as a user: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res := runDawnEnv(t, offlineEnv("DAWN_API_KEY=svc"), "users", "forget", "alice", "--url", s.url)
	if res.code != 0 || !strings.Contains(res.stdout, "forgot alice:") || !strings.Contains(res.stdout, "threads 1") {
		t.Fatalf("forget with the service key: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runDawnEnv(t, offlineEnv("DAWN_API_KEY=svc"), "users", "forget", "alice", "--url", s.url)
	if res.code != 0 || !strings.Contains(res.stdout, "forgot alice: nothing was left") {
		t.Fatalf("forget again: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
