package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestWithAuthApp: an app whose main installs dawn.WithAuth, built and
// started as `dawn start`, refuses a request its function refuses with 401
// and its message, and a tool of a request it accepts sees the user
// (dawn.IdentityFrom).
func TestWithAuthApp(t *testing.T) {
	bin := buildModule(t, "authapp")
	mock := &greetModel{}
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)
	app := t.TempDir()
	writeFiles(t, app, map[string]string{"desk/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nYou greet visitors."})
	url := startDawn(t, bin, app, "OPENAI_API_KEY=test", "OPENAI_BASE_URL="+srv.URL+"/v1", "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_API_KEY=")

	send := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url+"/threads/t-"+token+"/runs/stream",
			strings.NewReader(`{"route":"/desk","input":{"messages":[{"role":"user","content":"Greet Ada"}]}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := send("s-eve"); code != http.StatusUnauthorized || !strings.Contains(body, "unknown session: sign in again") {
		t.Fatalf("unknown session: %d %s", code, body)
	}
	code, body := send("s-ada")
	if code != http.StatusOK || !strings.Contains(body, "Welcome, Ada (asked by ada@example.com)") {
		t.Fatalf("ada's run: %d\n%s", code, body)
	}
}
