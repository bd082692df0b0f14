package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestAssistantsAreSharedConfiguration: assistants are the app's
// configuration, shared by every user. A user reads them (get, search,
// count, versions) and is refused with 403 forbidden when they create,
// update, set the latest version of or delete one, which leaves it as it
// was; the service credential changes them, and so does anyone on a
// server without authentication.
func TestAssistantsAreSharedConfiguration(t *testing.T) {
	creds := newCredentials(t, "hs256")
	h := apptest.New(t, ownerApp(t), dawntest.Script().Reply("x"), apptest.Options{Tools: rememberTool, Auth: creds.auth})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	m := &matrix{t: t, urls: func(string, int) string { return srv.URL }, tokens: creds.tokens}

	body := m.mustStatus("service", ownerCall{method: "POST", path: "/assistants", body: `{"graph_id":"job","name":"shared"}`}, 200)
	var created struct {
		ID string `json:"assistant_id"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil || created.ID == "" {
		t.Fatalf("the service's assistant: %v %s", err, body)
	}
	id := created.ID

	for _, c := range []ownerCall{
		{method: "GET", path: "/assistants/" + id},
		{method: "POST", path: "/assistants/search", body: `{"graph_id":"job"}`},
		{method: "POST", path: "/assistants/" + id + "/versions", body: `{}`},
	} {
		if got := m.mustStatus("ann", c, 200); !strings.Contains(got, id) {
			t.Errorf("ann's %s %s: %s, want the service's assistant", c.method, c.path, got)
		}
	}
	count := ownerCall{method: "POST", path: "/assistants/count", body: `{"graph_id":"job"}`}
	before := strings.TrimSpace(m.mustStatus("service", count, 200))
	if got := strings.TrimSpace(m.mustStatus("ann", count, 200)); got != before {
		t.Errorf("ann's count of assistants: %s, want the service's %s", got, before)
	}

	changes := []ownerCall{
		{method: "POST", path: "/assistants", body: `{"graph_id":"job","name":"mine"}`},
		{method: "PATCH", path: "/assistants/" + id, body: `{"name":"renamed"}`},
		{method: "POST", path: "/assistants/" + id + "/latest", body: `{"version":1}`},
		{method: "DELETE", path: "/assistants/" + id},
	}
	for _, c := range changes {
		got := m.mustStatus("ann", c, http.StatusForbidden)
		if !strings.Contains(got, `"kind":"forbidden"`) || !strings.Contains(got, "service credential") {
			t.Errorf("ann's %s %s: %s, want kind forbidden saying assistants are changed with the service credential", c.method, c.path, got)
		}
	}
	if got := m.mustStatus("service", ownerCall{method: "GET", path: "/assistants/" + id}, 200); !strings.Contains(got, `"name":"shared"`) || !strings.Contains(got, `"version":1`) {
		t.Errorf("the assistant after ann's refused changes: %s, want it as the service made it", got)
	}
	if got := strings.TrimSpace(m.mustStatus("service", count, 200)); got != before {
		t.Errorf("assistants after ann's refused create: %s, want %s as before", got, before)
	}

	m.mustStatus("service", changes[1], 200)
	m.mustStatus("service", changes[2], 200)
	if status, got := m.do("service", changes[3], "", "", ""); status >= 300 {
		t.Errorf("the service's delete: %d %s", status, got)
	}

	// Without authentication, anyone changes them.
	open := apptest.New(t, ownerApp(t), dawntest.Script().Reply("x"), apptest.Options{Tools: rememberTool})
	openSrv := httptest.NewServer(open.API)
	t.Cleanup(openSrv.Close)
	anon := &matrix{t: t, urls: func(string, int) string { return openSrv.URL }, tokens: map[string]string{}}
	anon.mustStatus("anyone", changes[0], 200)
}
