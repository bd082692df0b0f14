package cli_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// apiError is the API's JSON error as the tests read it.
type apiError struct {
	Error struct{ Kind, Message string }
}

// send makes one request and returns its status and JSON error, if any.
func send(t *testing.T, method, target, host, origin, contentType, body string) (int, apiError) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body = http.NoBody
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &e)
	return resp.StatusCode, e
}

// threadRuns counts a thread's runs (0 for a thread that does not exist).
func threadRuns(t *testing.T, base, thread string) int {
	t.Helper()
	resp, err := client.Get(base + "/threads/" + thread + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return 0
	}
	var runs []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&runs); err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// TestDevRefusesCrossSiteRequests checks that a page on another site cannot
// use dawn dev through the user's browser: not with a text/plain POST (no
// CORS preflight), and not by rebinding its own name to 127.0.0.1.
func TestDevRefusesCrossSiteRequests(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"support/[tenant]/agent.md": supportAgent("Support")})
	s := startDawn(t, offlineEnv(), 30*time.Second, "dev", "--app", dir)
	u, _ := url.Parse(s.url)
	run := `{"route":"/support/acme","input":{"messages":[{"role":"user","content":"hi"}]}}`

	refused := []struct {
		name, method, path, host, origin, contentType, body string
		status                                              int
		kind                                                string
	}{
		{"cross-site text/plain run", "POST", "/threads/x/runs/stream", "", "http://evil.test", "text/plain", run, 403, "forbidden_origin"},
		{"cross-site JSON run", "POST", "/threads/x/runs/wait", "", "http://evil.test", "application/json", run, 403, "forbidden_origin"},
		{"cross-site cancel", "POST", "/threads/x/cancel", "", "http://evil.test", "", "", 403, "forbidden_origin"},
		{"sandboxed page", "POST", "/threads/x/runs/wait", "", "null", "application/json", run, 403, "forbidden_origin"},
		{"rebound name reads state", "GET", "/threads/x/state", "evil.test:" + u.Port(), "", "", "", 403, "forbidden_host"},
		{"rebound name lists routes", "GET", "/routes", "evil.test:" + u.Port(), "", "", "", 403, "forbidden_host"},
		{"text/plain without an origin", "POST", "/threads/x/runs/wait", "", "", "text/plain", run, 415, "unsupported_media_type"},
	}
	for _, tc := range refused {
		status, e := send(t, tc.method, s.url+tc.path, tc.host, tc.origin, tc.contentType, tc.body)
		if status != tc.status || e.Error.Kind != tc.kind || e.Error.Message == "" {
			t.Errorf("%s: %d %+v, want %d with kind %s", tc.name, status, e, tc.status, tc.kind)
		}
	}
	if n := threadRuns(t, s.url, "x"); n != 0 {
		t.Fatalf("refused requests started %d runs", n)
	}

	// The dev page's own requests, and programs, still work.
	if status, e := send(t, "POST", s.url+"/threads/x/runs/wait", "", s.url, "application/json", run); status != http.StatusOK {
		t.Errorf("same-origin run: %d %+v", status, e)
	}
	// A body-less cancel passes the guard; with no run in flight it is
	// Dawn's 409 no_run_in_flight.
	if status, e := send(t, "POST", s.url+"/threads/x/cancel", "", "", "", ""); status != http.StatusConflict || e.Error.Kind != "no_run_in_flight" {
		t.Errorf("cancel without a body: %d %+v, want 409 no_run_in_flight", status, e)
	}
	local := "localhost:" + u.Port()
	if status, e := send(t, "GET", s.url+"/threads/x/state", local, "http://"+local, "", ""); status != http.StatusOK {
		t.Errorf("GET as localhost: %d %+v", status, e)
	}
}

// TestStartLimitsAndCORS checks dawn start's settings: origins listed with
// spaces after the commas work, and a body trickled in slower than
// --body-timeout gets 408.
func TestStartLimitsAndCORS(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"support/[tenant]/agent.md": supportAgent("Support")})
	env := offlineEnv("DAWN_CORS_ORIGINS=http://a.test, http://b.test")
	s := startDawn(t, env, 30*time.Second, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0", "--body-timeout", "300ms")

	req, _ := http.NewRequest(http.MethodOptions, s.url+"/threads/c/runs/stream", nil)
	req.Header.Set("Origin", "http://b.test")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "http://b.test" {
		t.Errorf("preflight from the second origin: Access-Control-Allow-Origin %q, want http://b.test", got)
	}

	u, _ := url.Parse(s.url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	body := `{"route":"/support/acme","input":{"messages":[{"role":"user","content":"hi"}]}}`
	fmt.Fprintf(conn, "POST /threads/slow/runs/wait HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(body), body[:5])
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body that stopped coming: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a body that stopped coming: %d, want 408", resp.StatusCode)
	}

	bad := runDawn(t, "start", "--app", dir, "--body-timeout", "-1s")
	if bad.code != 2 || !strings.Contains(bad.stderr, "--body-timeout") {
		t.Errorf("--body-timeout -1s: exit %d, stderr %q; want 2 naming the flag", bad.code, bad.stderr)
	}
}

// TestStartRefusesRebindingWithoutCredential: `dawn start` on 127.0.0.1
// with no credential answers only requests that name it by a loopback
// name or address, or by a name dawn.yaml's server.allowed_hosts lists, and
// only pages of its own origin or of DAWN_CORS_ORIGINS: a page on another
// site whose name was made to resolve to 127.0.0.1 (DNS rebinding) gets
// 403 and starts nothing. With a credential the server does not need the
// guard: the rebound page has no key.
func TestStartRefusesRebindingWithoutCredential(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"support/[tenant]/agent.md": supportAgent("Support"),
		"dawn.yaml":                 "server:\n  allowed_hosts: [dawn.test, Build.Example.COM.]\n",
	})
	s := startDawn(t, offlineEnv("DAWN_CORS_ORIGINS=http://app.test"), 30*time.Second, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	u, _ := url.Parse(s.url)
	port := u.Port()
	run := `{"route":"/support/acme","input":{"messages":[{"role":"user","content":"hi"}]}}`

	refused := []struct {
		name, method, path, host, origin, contentType, body string
		kind                                                string
	}{
		{"rebound name starts a run", "POST", "/threads/r/runs/wait", "evil.test:" + port, "", "application/json", run, "forbidden_host"},
		{"rebound name reads state", "GET", "/threads/r/state", "evil.test:" + port, "", "", "", "forbidden_host"},
		{"rebound name with its origin", "GET", "/routes", "evil.test:" + port, "http://evil.test:" + port, "", "", "forbidden_host"},
		{"localhost lookalike", "GET", "/routes", "localhost.evil.test:" + port, "", "", "", "forbidden_host"},
		{"subdomain of an allowed name", "GET", "/routes", "x.dawn.test:" + port, "", "", "", "forbidden_host"},
		{"cross-site text/plain run", "POST", "/threads/r/runs/stream", "", "http://evil.test", "text/plain", run, "forbidden_origin"},
		{"sandboxed page", "POST", "/threads/r/runs/wait", "", "null", "application/json", run, "forbidden_origin"},
	}
	for _, tc := range refused {
		status, e := send(t, tc.method, s.url+tc.path, tc.host, tc.origin, tc.contentType, tc.body)
		if status != http.StatusForbidden || e.Error.Kind != tc.kind || e.Error.Message == "" {
			t.Errorf("%s: %d %+v, want 403 with kind %s", tc.name, status, e, tc.kind)
		}
	}
	if n := threadRuns(t, s.url, "r"); n != 0 {
		t.Fatalf("refused requests started %d runs", n)
	}

	allowed := []struct{ name, host, origin string }{
		{"loopback address", "", ""},
		{"localhost with its origin", "localhost:" + port, "http://localhost:" + port},
		{"allowed name", "dawn.test:" + port, "http://dawn.test:" + port},
		{"allowed name in other case, no port", "build.example.com", ""},
		{"a CORS origin", "", "http://app.test"},
	}
	for _, tc := range allowed {
		if status, e := send(t, "GET", s.url+"/routes", tc.host, tc.origin, "", ""); status != http.StatusOK {
			t.Errorf("%s: %d %+v, want 200", tc.name, status, e)
		}
	}

	keyed := startDawn(t, offlineEnv("DAWN_API_KEY=k3y"), 30*time.Second, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	ku, _ := url.Parse(keyed.url)
	if status, e := send(t, "GET", keyed.url+"/routes", "evil.test:"+ku.Port(), "", "", ""); status != http.StatusUnauthorized {
		t.Errorf("a server with a credential, rebound name without the key: %d %+v, want 401 (the key guards it)", status, e)
	}
}

// TestDevAllowsConfiguredHosts: dawn dev reads the same
// server.allowed_hosts as dawn start.
func TestDevAllowsConfiguredHosts(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"support/[tenant]/agent.md": supportAgent("Support"),
		"dawn.yaml":                 "server:\n  allowed_hosts: [dawn.test]\n",
	})
	s := startDawn(t, offlineEnv(), 30*time.Second, "dev", "--app", dir)
	u, _ := url.Parse(s.url)
	if status, e := send(t, "GET", s.url+"/routes", "dawn.test:"+u.Port(), "http://dawn.test:"+u.Port(), "", ""); status != http.StatusOK {
		t.Errorf("dev, allowed name: %d %+v, want 200", status, e)
	}
	if status, e := send(t, "GET", s.url+"/routes", "evil.test:"+u.Port(), "", "", ""); status != http.StatusForbidden || e.Error.Kind != "forbidden_host" {
		t.Errorf("dev, another name: %d %+v, want 403 forbidden_host", status, e)
	}
}

// TestDevSaysItServesWithoutAuth: dawn dev with auth: in dawn.yaml says at
// start that it serves without it, instead of dropping it silently.
func TestDevSaysItServesWithoutAuth(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"support/[tenant]/agent.md": supportAgent("Support"),
		"dawn.yaml":                 "auth:\n  jwt:\n    secret_env: DAWN_JWT_SECRET\n",
	})
	s := startDawn(t, append(offlineEnv(), "DAWN_JWT_SECRET=s3cret"), 30*time.Second, "dev", "--app", dir)
	if out := s.out.String(); !strings.Contains(out, "dawn dev serves without authentication") || !strings.Contains(out, "dawn start") {
		t.Errorf("dev with auth: said nothing of it at start:\n%s", out)
	}
}
