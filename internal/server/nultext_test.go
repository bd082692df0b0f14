package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/pgtest"
)

// TestNULInTextIsNotAServerError: a NUL character (\u0000) is valid JSON
// but Postgres cannot keep it in a text column. A request that carries one
// into the store is the client's mistake: it gets a 4xx saying so on
// Postgres, never a 500, and no request of the list answers 5xx on SQLite
// either. Before, Postgres's "invalid byte sequence for encoding UTF8:
// 0x00" went out as 500 internal.
func TestNULInTextIsNotAServerError(t *testing.T) {
	requests := []struct{ method, path, body string }{
		{"POST", "/assistants", `{"graph_id":"plain","name":"nul \u0000 name"}`},
		{"POST", "/assistants", `{"graph_id":"plain","description":"nul \u0000"}`},
		{"POST", "/assistants/search", `{"name":"\u0000"}`},
		{"POST", "/threads/search", `{"ids":["\u0000"]}`},
		{"POST", "/runs/crons/search", `{"assistant_id":"\u0000"}`},
		{"GET", "/threads/nul/runs/%00/stream", ""},
		{"GET", "/threads/nul/tool-outputs/%00", ""},
	}
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			opts := apptest.Options{}
			if db == "postgres" {
				opts.StorePath = pgtest.Database(t)
			}
			h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hi.").Repeat(), opts)
			base := h.Serve(t)
			if resp := post(t, base+"/threads", `{"thread_id":"nul"}`); resp.StatusCode != http.StatusOK {
				t.Fatalf("creating the thread: %d", resp.StatusCode)
			}
			for _, r := range requests {
				req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
				if r.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode >= 500:
					t.Errorf("%s %s %s: %d %s, want a 4xx or a success", r.method, r.path, r.body, resp.StatusCode, data)
				case resp.StatusCode >= 400 && !strings.Contains(string(data), "NUL") && !strings.Contains(string(data), "not_found"):
					t.Errorf("%s %s %s: %d %s, want a message naming the NUL character", r.method, r.path, r.body, resp.StatusCode, data)
				}
			}
		})
	}
}
