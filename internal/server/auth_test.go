package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/tmc/langchaingo/llms"
)

const jwtSecret = "server-test-secret"

// hsAuth is HS256 JWT authentication (audience dawn) with the service key
// "svc".
func hsAuth(t *testing.T) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(context.Background(), auth.Options{
		Config: auth.Config{JWT: &auth.JWT{SecretEnv: "SECRET", Audience: "dawn"}},
		APIKey: "svc",
		Env:    func(string) string { return jwtSecret },
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// authed sends method url body with a bearer token.
func authed(t *testing.T, method, url, token, body string) *http.Response {
	t.Helper()
	req := newRequest(t, method, url, body)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return do(t, req)
}

// jwtServer serves the support app with HS256 JWTs (audience dawn) and the
// service key "svc".
func jwtServer(t *testing.T) string {
	t.Helper()
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: hsAuth(t)}))
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

// whoami is a tool that answers with the caller the run serves.
func whoami() capabilities.AppTool {
	return capabilities.AppTool{Tool: capabilities.Func("whoami", "Who asks.", func(ctx context.Context, _ struct{}) (string, error) {
		id, ok := capabilities.IdentityFrom(ctx)
		if !ok {
			return "nobody", nil
		}
		if id.Service {
			return "the service", nil
		}
		return "user " + id.User + " (" + fmt.Sprint(id.Claims["aud"]) + ")", nil
	})}
}

// TestIdentityReachesTheRun: the identity of the request that starts a
// run reaches its tool calls (capabilities.IdentityFrom, which
// dawn.IdentityFrom is) and the route prompt's {{ .User }}; the LangGraph
// dialect records it in the run's config.configurable as LangGraph's
// server does, dropping what the client claimed there.
func TestIdentityReachesTheRun(t *testing.T) {
	dir := writeApp(t, map[string]string{"desk/agent.md": "---\nmodel: offline\n---\nYou help {{ .User }}.\n"})
	model := dawntest.Script().CallTool("whoami", map[string]any{}).Reply("done").Repeat()
	h := apptest.New(t, dir, model, apptest.Options{Tools: []capabilities.AppTool{whoami()}})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: hsAuth(t)}))
	t.Cleanup(srv.Close)
	alice := authtest.HS256(t, jwtSecret, authtest.Claims("alice", "", "dawn"))

	resp := authed(t, http.MethodPost, srv.URL+"/threads/i1/runs/stream", alice, runBody("/desk", "who am I?"))
	var result string
	for _, ev := range readSSE(t, resp) {
		if ev.Type == "tool_result" {
			result = string(ev.Data)
		}
	}
	if !strings.Contains(result, "user alice (dawn)") {
		t.Errorf("the tool saw %s, want user alice with the token's claims", result)
	}
	system := model.Requests()[0][0].Parts[0].(llms.TextContent).Text
	if !strings.HasPrefix(system, "You help alice.") {
		t.Errorf("system prompt %q, want {{ .User }} rendered as alice", system)
	}

	body := `{"assistant_id":"/desk","input":{"messages":[{"type":"human","content":"hi"}]},"if_not_exists":"create","config":{"configurable":{"langgraph_auth_user_id":"mallory","k":"v"}}}`
	resp = authed(t, http.MethodPost, srv.URL+"/threads/i2/runs", alice, body)
	var run struct {
		Kwargs struct {
			Config struct {
				Configurable map[string]any `json:"configurable"`
			} `json:"config"`
		} `json:"kwargs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("LangGraph run: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	conf := run.Kwargs.Config.Configurable
	user, _ := conf["langgraph_auth_user"].(map[string]any)
	if conf["langgraph_auth_user_id"] != "alice" || user["identity"] != "alice" || user["is_authenticated"] != true || conf["k"] != "v" {
		t.Errorf("run config.configurable = %v, want langgraph_auth_user(_id) alice and the client's k", conf)
	}
}

// TestAuthJWKS: the server verifies RS256 tokens against a JWKS served
// over loopback, and keeps doing so after the provider rotates its key.
func TestAuthJWKS(t *testing.T) {
	idp := authtest.NewJWKS(t)
	a, err := auth.New(t.Context(), auth.Options{Config: auth.Config{JWT: &auth.JWT{JWKSURL: idp.URL, Issuer: "https://id.test", Audience: "dawn"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: a}))
	t.Cleanup(srv.Close)
	routes := func(token string) int {
		resp := authed(t, http.MethodGet, srv.URL+"/routes", token, "")
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := routes(idp.Sign(t, authtest.Claims("carol", "https://id.test", "dawn"))); code != http.StatusOK {
		t.Fatalf("RS256 token from the JWKS: %d", code)
	}
	if code := routes(idp.Sign(t, authtest.Claims("carol", "https://other.test", "dawn"))); code != http.StatusUnauthorized {
		t.Fatalf("wrong issuer: %d, want 401", code)
	}
	idp.Rotate(t)
	if code := routes(idp.Sign(t, authtest.Claims("carol", "https://id.test", "dawn"))); code != http.StatusOK {
		t.Fatalf("token of the rotated key: %d", code)
	}
}
