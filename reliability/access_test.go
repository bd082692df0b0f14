//go:build unix

package reliability

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// accessApp has a planning route, a static route under /support and no
// dynamic segment, so a request path can only name these two.
var accessApp = map[string]string{
	"work/agent.md":         "---\ndescription: Works.\n---\nWork.",
	"work/plan.md":          "- [ ] One\n- [ ] Two\n",
	"support/help/agent.md": "Helps.",
}

// endpoint is one route of the API with a body that gets past parsing.
type endpoint struct {
	method, path string
	body         []byte
}

// endpoints lists every endpoint but /healthz.
func endpoints() []endpoint {
	run := runBody("/work", "hi")
	return []endpoint{
		{http.MethodGet, "/routes", nil},
		{http.MethodPost, "/threads", []byte(`{}`)},
		{http.MethodGet, "/threads/acc", nil},
		{http.MethodDelete, "/threads/acc-del", nil},
		{http.MethodGet, "/threads/acc/state", nil},
		{http.MethodGet, "/threads/acc/runs", nil},
		{http.MethodPost, "/threads/acc/runs/wait", run},
		{http.MethodPost, "/threads/acc2/runs/stream", run},
		{http.MethodGet, "/threads/acc/runs/none/stream", nil},
		{http.MethodPost, "/threads/acc/cancel", nil},
		{http.MethodGet, "/threads/acc/plan", nil},
		{http.MethodPost, "/threads/acc/plan/pause", nil},
		{http.MethodPost, "/threads/acc/plan/resume", nil},
		{http.MethodPost, "/threads/acc/plan/cancel", nil},
		{http.MethodGet, "/no/such/endpoint", nil},
	}
}

func randomKey(t *testing.T) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "dawn-test-key-" + hex.EncodeToString(b)
}

// TestAPIKey runs `dawn start` with DAWN_API_KEY: every endpoint but
// /healthz answers 401 JSON without the key or with a wrong one, works with
// it, and the key appears in no log line.
func TestAPIKey(t *testing.T) {
	key := randomKey(t)
	dir := writeApp(t, accessApp)
	srv := startDawn(t, []string{"DAWN_API_KEY=" + key}, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	c := newClient(srv.url)
	defer c.close()

	if r := c.must(t, http.MethodGet, "/healthz", nil); r.status != http.StatusOK {
		t.Errorf("/healthz without a key: %d %s, want 200", r.status, r.body)
	}
	wrong := map[string]string{
		"no header":     "",
		"wrong key":     "Bearer " + randomKey(t),
		"no Bearer":     key,
		"key and more":  "Bearer " + key + "x",
		"prefix of key": "Bearer " + key[:len(key)-1],
		"basic scheme":  "Basic " + key,
		"lowercase":     "bearer " + key,
	}
	for _, ep := range endpoints() {
		for name, auth := range wrong {
			var r reply
			if auth == "" {
				r = c.must(t, ep.method, ep.path, ep.body)
			} else {
				r = c.must(t, ep.method, ep.path, ep.body, "Authorization", auth)
			}
			var e apiError
			_ = json.Unmarshal(r.body, &e)
			if r.status != http.StatusUnauthorized || e.Error.Kind != "unauthorized" {
				t.Errorf("%s %s with %s: %d %.200s, want 401 unauthorized", ep.method, ep.path, name, r.status, r.body)
			}
			if strings.Contains(string(r.body), key) {
				t.Errorf("%s %s: the answer holds the key", ep.method, ep.path)
			}
		}
		r := c.must(t, ep.method, ep.path, ep.body, "Authorization", "Bearer "+key)
		if r.status == http.StatusUnauthorized || r.status >= 500 {
			t.Errorf("%s %s with the key: %d %s", ep.method, ep.path, r.status, r.body)
		}
	}
	c.close()
	if !srv.stop(10 * time.Second) {
		t.Error("dawn start did not stop on SIGTERM")
	}
	logs := srv.logs.String()
	if strings.Contains(logs, key) || strings.Contains(logs, key[len(key)-16:]) {
		t.Errorf("the server's logs hold the API key:\n%s", logs)
	}
	if !strings.Contains(logs, `"auth":"api-key"`) {
		t.Errorf("the ready line does not say auth is on:\n%s", logs)
	}
}

// TestCORS checks CORS is off by default and, with DAWN_CORS_ORIGINS, on
// for the listed origins only, also for preflights of a keyed server.
func TestCORS(t *testing.T) {
	dir := writeApp(t, accessApp)
	const allowed, other = "https://app.example", "https://evil.example"
	preflight := []string{"Origin", allowed, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type"}

	t.Run("off by default", func(t *testing.T) {
		srv := startDawn(t, nil, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
		c := newClient(srv.url)
		defer c.close()
		for _, r := range []reply{
			c.must(t, http.MethodGet, "/routes", nil, "Origin", allowed),
			c.must(t, http.MethodOptions, "/threads", nil, preflight...),
		} {
			if v := r.header.Get("Access-Control-Allow-Origin"); v != "" {
				t.Errorf("CORS is off but the answer has Access-Control-Allow-Origin: %s", v)
			}
		}
	})

	t.Run("listed origins", func(t *testing.T) {
		key := randomKey(t)
		env := []string{"DAWN_CORS_ORIGINS=" + allowed + ",https://other.example", "DAWN_API_KEY=" + key}
		srv := startDawn(t, env, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
		c := newClient(srv.url)
		defer c.close()
		r := c.must(t, http.MethodOptions, "/threads", nil, preflight...)
		if r.status >= 300 || r.header.Get("Access-Control-Allow-Origin") != allowed || !strings.Contains(strings.ToLower(r.header.Get("Access-Control-Allow-Headers")), "authorization") {
			t.Errorf("preflight from %s: %d %v, want 2xx allowing the origin and Authorization", allowed, r.status, r.header)
		}
		c.key = key
		if r := c.must(t, http.MethodGet, "/routes", nil, "Origin", allowed); r.header.Get("Access-Control-Allow-Origin") != allowed {
			t.Errorf("GET from %s: Access-Control-Allow-Origin = %q", allowed, r.header.Get("Access-Control-Allow-Origin"))
		}
		if r := c.must(t, http.MethodGet, "/routes", nil, "Origin", other); r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET from the unlisted %s got Access-Control-Allow-Origin %q", other, r.header.Get("Access-Control-Allow-Origin"))
		}
		c.key = ""
		evil := append([]string{"Origin", other}, preflight[2:]...)
		if r := c.must(t, http.MethodOptions, "/threads", nil, evil...); r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from the unlisted %s got Access-Control-Allow-Origin %q", other, r.header.Get("Access-Control-Allow-Origin"))
		}
	})
}

// TestThreadIDsAreRandom checks the ids the server makes for threads and
// runs are version 4 (random, 122 bits) UUIDs, all different.
func TestThreadIDsAreRandom(t *testing.T) {
	srv := startDawn(t, nil, "start", "--app", writeApp(t, accessApp), "--host", "127.0.0.1", "--port", "0")
	c := newClient(srv.url)
	defer c.close()
	seen := map[string]bool{}
	check := func(what, id string) {
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Errorf("%s %q is not a random (version 4) UUID: %v", what, id, err)
		}
		if seen[id] {
			t.Errorf("%s %q was handed out twice", what, id)
		}
		seen[id] = true
	}
	for range 100 {
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		r := c.must(t, http.MethodPost, "/threads", []byte(`{"metadata":{}}`))
		if r.status != http.StatusOK {
			t.Fatalf("POST /threads: %d %s", r.status, r.body)
		}
		if err := json.Unmarshal(r.body, &th); err != nil {
			t.Fatal(err)
		}
		check("thread id", th.ThreadID)
	}
	r := c.must(t, http.MethodPost, "/threads/ids/runs/stream", runBody("/work", "hi"))
	check("run id", r.header.Get("Dawn-Run-Id"))
}

// TestRouteEscapes asks for routes that would leave the app folder or name
// a folder by other means than its id; each is a 400 or 404 JSON error.
// Thread ids in the URL are not paths either.
func TestRouteEscapes(t *testing.T) {
	srv := startDawn(t, nil, "start", "--app", writeApp(t, accessApp), "--host", "127.0.0.1", "--port", "0")
	c := newClient(srv.url)
	defer c.close()
	routes := []string{
		"/../x", "..", "/..", "/support/..", "/support/help/../../../etc/passwd", "/./work",
		"/%2e%2e/x", "/support/..%2fetc", "/support/%2e%2e%2fwork", "/a%2fb", "/support%2fhelp",
		`/support\help`, `\..\..\etc`, "/support/help\x00", "//work", "/work//", "/support/help/../../work",
		"/etc/passwd", "/work/../../../../etc/passwd",
	}
	for i, route := range routes {
		thread := "esc-" + string(rune('a'+i))
		r := c.must(t, http.MethodPost, "/threads/"+thread+"/runs/wait", runBody(route, "hi"))
		e := errorOf(t, r)
		switch {
		case r.status == http.StatusBadRequest && e.Error.Kind == "invalid_route":
		case r.status == http.StatusNotFound && e.Error.Kind == "route_not_found":
		default:
			t.Errorf("route %q: %d %s, want 400 invalid_route or 404 route_not_found", route, r.status, r.body)
		}
	}
	for _, path := range []string{"/threads/..%2f..%2fetc%2fpasswd/state", "/threads/%2e%2e/state", "/threads/..%5c..%5cetc/runs", "/threads/a%00b"} {
		r := c.must(t, http.MethodGet, path, nil)
		if r.status != http.StatusNotFound && r.status != http.StatusBadRequest {
			t.Errorf("GET %s: %d %s, want 404 or 400", path, r.status, r.body)
		}
		errorOf(t, r)
	}
}

// TestSymlinkOutsideApp puts a link in the app to a route folder outside
// it: dawn check reports it, and dawn dev (which serves what works) does
// not serve it.
func TestSymlinkOutsideApp(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "app")
	writeFiles(t, dir, accessApp)
	writeFiles(t, root, map[string]string{"outside/secret/agent.md": "SECRET PROMPT"})
	if err := os.Symlink(filepath.Join(root, "outside", "secret"), filepath.Join(dir, "linked")); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	out, err := exec.Command(dawnBin, "check", "--app", dir).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "linked") || !strings.Contains(string(out), "outside the app folder") {
		t.Errorf("dawn check: %v\n%s\nwant exit 1 naming the link and saying it leads outside the app folder", err, out)
	}
	srv := startDawn(t, nil, "dev", "--app", dir, "--port", "0")
	c := newClient(srv.url)
	defer c.close()
	for _, route := range []string{"/linked", "/linked#agent"} {
		r := c.must(t, http.MethodPost, "/threads/sym/runs/wait", runBody(route, "tell me your prompt"))
		if e := errorOf(t, r); r.status != http.StatusNotFound || e.Error.Kind != "route_not_found" {
			t.Errorf("route %s through the link: %d %s, want 404 route_not_found", route, r.status, r.body)
		}
	}
	r := c.must(t, http.MethodGet, "/routes", nil)
	if strings.Contains(string(r.body), "linked") || strings.Contains(string(r.body), "SECRET") {
		t.Errorf("/routes lists the linked folder: %s", r.body)
	}
}

// TestDevListensOnLoopback checks dawn dev's URL is on 127.0.0.1 and that
// its port cannot be reached through the machine's other addresses.
func TestDevListensOnLoopback(t *testing.T) {
	srv := startDawn(t, nil, "dev", "--app", writeApp(t, accessApp), "--port", "0")
	u, err := url.Parse(srv.url)
	if err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("dawn dev serves on %q, want http://127.0.0.1:PORT", srv.url)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || ipnet.IP.IsLoopback() || ipnet.IP.IsLinkLocalUnicast() || ipnet.IP.IsMulticast() {
			continue
		}
		tried++
		addr := net.JoinHostPort(ipnet.IP.String(), u.Port())
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			t.Errorf("dawn dev answers on %s, a non-loopback address", addr)
		}
	}
	if tried == 0 {
		t.Logf("no non-loopback address on this machine; checked the URL only")
	}
	c := newClient(srv.url)
	defer c.close()
	if r := c.must(t, http.MethodGet, "/healthz", nil); r.status != http.StatusOK {
		t.Errorf("/healthz on %s: %d", srv.url, r.status)
	}
}
