package cli_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/auth/authtest"
)

// authApp writes an app with one route and dawnYAML.
func authApp(t *testing.T, dawnYAML string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hi"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"hi/agent.md": "You answer."}
	if dawnYAML != "" {
		files["dawn.yaml"] = dawnYAML
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readyAuth returns the auth field of the server's ready line.
func readyAuth(t *testing.T, out string) string {
	t.Helper()
	for line := range strings.Lines(out) {
		var ready struct {
			Msg  string `json:"msg"`
			Auth string `json:"auth"`
		}
		if json.Unmarshal([]byte(line), &ready) == nil && ready.Msg == "dawn server ready" {
			return ready.Auth
		}
	}
	t.Fatalf("no ready line in:\n%s", out)
	return ""
}

// TestStartRefusesOpenNetwork: dawn start on 0.0.0.0 with no credential
// refuses to start and says how to configure authentication.
func TestStartRefusesOpenNetwork(t *testing.T) {
	dir := authApp(t, "")
	cmdEnv := offlineEnv("DAWN_STORE=" + filepath.Join(t.TempDir(), "dawn.db"))
	res := runDawnEnv(t, cmdEnv, "start", "--app", dir, "--host", "0.0.0.0", "--port", "0")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"refusing to listen on 0.0.0.0", "DAWN_API_KEY", "auth: {jwt:", "--no-auth", "auth: none", "--host 127.0.0.1"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, res.stderr)
		}
	}
}

// TestStartAuthModes: with --no-auth, auth: none, DAWN_API_KEY or a JWT
// secret, dawn start on 0.0.0.0 serves and its ready line names the mode;
// on 127.0.0.1 it needs none.
func TestStartAuthModes(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		env        []string
		args       []string
		mode       string
	}{
		{"no-auth flag", "", nil, []string{"--host", "0.0.0.0", "--no-auth"}, "none"},
		{"auth none", "auth: none\n", nil, []string{"--host", "0.0.0.0"}, "none"},
		{"api key", "", []string{"DAWN_API_KEY=k"}, []string{"--host", "0.0.0.0"}, "api-key"},
		{"jwt", "auth:\n  jwt:\n    secret_env: DAWN_JWT_SECRET\n", []string{"DAWN_JWT_SECRET=s3cret"}, []string{"--host", "0.0.0.0"}, "jwt hs256"},
		{"loopback", "", nil, []string{"--host", "127.0.0.1"}, "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := offlineEnv(append(c.env, "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))...)
			s := startDawn(t, env, time.Minute, append([]string{"start", "--app", authApp(t, c.yaml), "--port", "0"}, c.args...)...)
			if got := readyAuth(t, s.out.String()); got != c.mode {
				t.Errorf("auth %q, want %q", got, c.mode)
			}
		})
	}
}

// TestStartJWT: dawn start with auth.jwt answers 401 without a token and
// serves a request with a valid HS256 token.
func TestStartJWT(t *testing.T) {
	dir := authApp(t, "auth:\n  jwt:\n    secret_env: DAWN_JWT_SECRET\n    audience: dawn\n")
	env := offlineEnv("DAWN_JWT_SECRET=s3cret", "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))
	s := startDawn(t, env, time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	for _, c := range []struct {
		token string
		want  int
	}{
		{"", http.StatusUnauthorized},
		{authtest.HS256(t, "s3cret", authtest.Claims("ann", "", "dawn")), http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/routes", nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("token %q: status %d, want %d", c.token, resp.StatusCode, c.want)
		}
	}
}
