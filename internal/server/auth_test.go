package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/server"
)

const jwtSecret = "server-test-secret"

// jwtServer serves the support app with HS256 JWTs (audience dawn) and the
// service key "svc".
func jwtServer(t *testing.T) string {
	t.Helper()
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	a, err := auth.New(context.Background(), auth.Options{
		Config: auth.Config{JWT: &auth.JWT{SecretEnv: "SECRET", Audience: "dawn"}},
		APIKey: "svc",
		Env:    func(string) string { return jwtSecret },
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: a}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAuthRefusals: with JWT authentication the API answers 401
// unauthorized in its error format to a request without a token or with
// an expired, wrongly signed, wrong-audience or alg-none one, saying which
// check failed; a valid token and the service key pass; probes and CORS
// preflights need none.
func TestAuthRefusals(t *testing.T) {
	base := jwtServer(t)
	good := authtest.Claims("alice", "", "dawn")
	expired := authtest.Claims("alice", "", "dawn")
	expired["exp"] = time.Now().Add(-time.Minute).Unix()
	for _, c := range []struct {
		name, token string
		status      int
		says        string
	}{
		{"no token", "", 401, "missing credentials"},
		{"expired", authtest.HS256(t, jwtSecret, expired), 401, "expired"},
		{"wrongly signed", authtest.HS256(t, "not-the-secret", good), 401, "signature is invalid"},
		{"wrong audience", authtest.HS256(t, jwtSecret, authtest.Claims("alice", "", "else")), 401, "audience"},
		{"alg none", authtest.None(t, good), 401, "algorithm"},
		{"valid", authtest.HS256(t, jwtSecret, good), 200, ""},
		{"service key", "svc", 200, ""},
	} {
		req := newRequest(t, http.MethodGet, base+"/routes", "")
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp := do(t, req)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d %s, want %d", c.name, resp.StatusCode, body, c.status)
			continue
		}
		if c.status != 401 {
			continue
		}
		var e struct {
			Error struct{ Kind, Message string } `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error.Kind != "unauthorized" || !strings.Contains(e.Error.Message, c.says) {
			t.Errorf("%s: body %s, want kind unauthorized saying %q", c.name, body, c.says)
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		resp := do(t, newRequest(t, http.MethodGet, base+p, ""))
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s without a token: %d, want 200", p, resp.StatusCode)
		}
	}
}
