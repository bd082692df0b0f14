package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/pgtest"
)

// readyBody is /readyz's answer: a status, or the API's error.
type readyBody struct {
	Status string `json:"status"`
	Error  struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// readyz answers GET base+/readyz: its status, Retry-After and body.
func readyz(t *testing.T, base string) (int, string, readyBody) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var body readyBody
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("/readyz answered %d with a body that is not JSON: %q", resp.StatusCode, data)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), body
}

// TestReadyzFollowsTheStore: /readyz is 200 while the Postgres store
// answers, 503 store_unavailable (with Retry-After, naming no database)
// while the link to it is cut, and 200 again once it is back; /healthz
// stays 200 throughout.
func TestReadyzFollowsTheStore(t *testing.T) {
	db := pgtest.Database(t)
	proxy, dsn := pgtest.NewProxy(t, db)
	h := apptest.New(t, supportApp(t), dawntest.Script(), apptest.Options{StorePath: dsn})
	base := h.Serve(t)
	t.Cleanup(proxy.Restore)

	if status, _, body := readyz(t, base); status != http.StatusOK || body.Status != "ready" {
		t.Fatalf("/readyz with the store up = %d %v, want 200 ready", status, body)
	}
	proxy.Cut()
	status, retry, body := readyz(t, base)
	if status != http.StatusServiceUnavailable || body.Error.Kind != "store_unavailable" || retry == "" {
		t.Errorf("/readyz with the store cut = %d (Retry-After %q) %v, want 503 store_unavailable with Retry-After", status, retry, body)
	}
	if l := leaks(body.Error.Message, db); len(l) > 0 {
		t.Errorf("/readyz names the database (%v): %v", l, body)
	}
	var health map[string]string
	if getJSON(t, base+"/healthz", &health); health["status"] != "ready" {
		t.Errorf("/healthz with the store cut = %v, want ready (the process is alive)", health)
	}
	proxy.Restore()
	waitFor(t, func() bool { s, _, _ := readyz(t, base); return s == http.StatusOK })
}
