package cli_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDevBrokenAgentFileIsBrokenNotMissing: dev started on an app where one
// route's agent.md cannot be read serves the others, and a request for the
// broken route (by id or by a concrete path) answers 503 route_broken
// naming it and saying to run dawn check, as a route that failed to
// prepare does; it is not 404 "no route matches", which sends the user to
// dawn routes, where the route is not listed.
func TestDevBrokenAgentFileIsBrokenNotMissing(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"good/agent.md":         "Good.\n",
		"bad/agent.md":          "---\nmodel: [unclosed\n---\nBad.\n",
		"shop/[store]/agent.md": "---\nbogus_key: 1\n---\nShop.\n",
	})
	s := startDawn(t, offlineEnv(), 30*time.Second, "dev", "--app", dir)
	if values := runValues(t, s.url, "/good"); len(values["messages"]) == 0 {
		t.Fatalf("the good route did not run: %v", values)
	}
	for _, route := range []string{"/bad", "/shop/[store]", "/shop/acme"} {
		body := `{"route":"` + route + `","input":{"messages":[{"role":"user","content":"hi"}]}}`
		resp, err := client.Post(s.url+"/threads/broken/runs/wait", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(data), `"route_broken"`) || !strings.Contains(string(data), "dawn check") {
			t.Errorf("run %s: %d %s, want 503 route_broken saying to run dawn check", route, resp.StatusCode, data)
		}
	}
	for _, route := range []string{"/nowhere", "/shop"} {
		body := `{"route":"` + route + `","input":{"messages":[{"role":"user","content":"hi"}]}}`
		resp, err := client.Post(s.url+"/threads/broken/runs/wait", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("run %s: %d, want 404: no route, broken or not, is there", route, resp.StatusCode)
		}
	}
}
