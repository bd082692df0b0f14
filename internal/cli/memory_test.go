package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/longmemory"
)

// TestMemoryCommand: dawn memory lists a route's candidate, approves it,
// edits it, exports it with its provenance and forgets it, on a running
// server; a user's token sees none of the app's memories, and names no
// other user.
func TestMemoryCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "dawn.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(longmemory.Record{Text: "Deploys happen on Tuesday", Status: longmemory.StatusCandidate, WrittenBy: &longmemory.Author{Thread: "t1", Run: "r1", Via: "agent"}})
	err = st.PutItem(context.Background(), longmemory.CandidateNamespace("/hi"), "deploy-day", rec)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := authApp(t, "auth:\n  jwt:\n    secret_env: DAWN_JWT_SECRET\n")
	s := startDawn(t, offlineEnv("DAWN_JWT_SECRET=s3cret", "DAWN_API_KEY=svc", "DAWN_STORE="+db), time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	svc := offlineEnv("DAWN_API_KEY=svc")
	step := func(want string, args ...string) {
		t.Helper()
		res := runDawnEnv(t, svc, append(append([]string{"memory"}, args...), "--url", s.url, "--route", "/hi")...)
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Fatalf("dawn memory %s: exit %d, want %q in\n%s%s", strings.Join(args, " "), res.code, want, res.stdout, res.stderr)
		}
	}
	step("candidate  deploy-day  t1", "list")
	step("approved deploy-day", "approve", "deploy-day")
	step("approved  deploy-day", "list", "--status", "approved")
	step("edited deploy-day", "edit", "deploy-day", "Deploys happen on Wednesday")
	step(`"approved_by":{"service":true,"via":"http"}`, "export")
	step("Wednesday", "export")
	step("forgot deploy-day", "forget", "deploy-day")
	step("no memories for /hi", "list")

	alice := authtest.HS256(t, "s3cret", authtest.Claims("alice", "", ""))
	if res := runDawnEnv(t, offlineEnv(), "memory", "list", "--route", "/hi", "--user", "bob", "--url", s.url, "--key", alice); res.code != 1 || !strings.Contains(res.stderr, "403") {
		t.Fatalf("alice naming bob: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := runDawnEnv(t, svc, "memory", "list", "--url", s.url); res.code == 0 || !strings.Contains(res.stderr, "--route is required") {
		t.Fatalf("list with no route: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
