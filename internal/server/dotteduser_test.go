package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth/authtest"
)

// TestUserIDsWithPeriodsHaveAStore: users named by their email (a user
// claim with periods, as user_claim: email gives) use the Store API and
// remember/recall, each seeing only their own items under the namespaces
// they named. Before, every such call answered 400 "without periods".
func TestUserIDsWithPeriodsHaveAStore(t *testing.T) {
	creds := newCredentials(t, "hs256")
	const secret = "matrix-secret-of-at-least-32-bytes!"
	ada := authtest.HS256(t, secret, authtest.Claims("ada@example.com", "", "dawn"))
	bob := authtest.HS256(t, secret, authtest.Claims("bob.smith@example.org", "", "dawn"))
	dir := apptest.WriteApp(t, map[string]string{"assistant/agent.md": "---\nmemory: true\n---\nYou remember."})
	model := dawntest.Script().
		CallTool("remember", map[string]string{"text": "Ada's favorite color is teal"}).Reply("kept").
		CallTool("recall", map[string]string{"query": "color"}).Reply("recalled").
		CallTool("recall", map[string]string{"query": "color"}).Reply("recalled")
	h := apptest.New(t, dir, model, apptest.Options{Auth: creds.auth})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	call := func(token, method, path, body string) (int, string) {
		t.Helper()
		resp := authed(t, method, srv.URL+path, token, body)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}

	if status, raw := call(ada, "PUT", "/store/items", `{"namespace":["notes"],"key":"k","value":{"of":"ada"}}`); status != http.StatusNoContent {
		t.Fatalf("ada puts an item: %d %s", status, raw)
	}
	status, raw := call(ada, "GET", "/store/items?namespace=notes&key=k", "")
	if status != http.StatusOK || !strings.Contains(raw, `"namespace":["notes"]`) || !strings.Contains(raw, `"of":"ada"`) {
		t.Fatalf("ada reads her item: %d %s", status, raw)
	}
	for _, c := range []struct{ path, body string }{{"/store/items/search", `{"namespace_prefix":["notes"]}`}, {"/store/namespaces", `{}`}} {
		if status, raw := call(ada, "POST", c.path, c.body); status != http.StatusOK || !strings.Contains(raw, `["notes"]`) || strings.Contains(raw, "users") || strings.Contains(raw, "example") {
			t.Errorf("ada's %s: %d %s, want her namespace as she named it", c.path, status, raw)
		}
		if status, raw := call(bob, "POST", c.path, c.body); status != http.StatusOK || strings.Contains(raw, "notes") {
			t.Errorf("bob's %s: %d %s, want none of ada's", c.path, status, raw)
		}
	}
	status, raw = call(bob, "GET", "/store/items?namespace=notes&key=k", "")
	if wantStatus, want := call(bob, "GET", "/store/items?namespace=notes&key=none", ""); status != wantStatus || raw != want {
		t.Errorf("bob reads ada's item: %d %s, want what a missing item gets: %d %s", status, raw, wantStatus, want)
	}

	run := func(token, thread string) string {
		t.Helper()
		status, raw := call(token, "POST", "/threads/"+thread+"/runs/wait", apptest.RunBody("/assistant", "go"))
		if status != http.StatusOK {
			t.Fatalf("run as %s: %d %s", thread, status, raw)
		}
		return raw
	}
	run(ada, "ada-1")
	if out := run(ada, "ada-2"); !strings.Contains(out, "teal") {
		t.Errorf("ada's recall: %s, want the memory she kept", out)
	}
	if out := run(bob, "bob-1"); strings.Contains(out, "teal") {
		t.Errorf("bob's recall found ada's memory: %s", out)
	}
}
