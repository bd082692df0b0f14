package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/tmc/langchaingo/llms"
)

// TestModelUnavailable: a run of a route whose model cannot be made (its
// provider's key is not set) is refused with 503 model_unavailable, whose
// message says what to set, on both wires: the server is not broken, its
// configuration is incomplete, and the thread keeps no run.
func TestModelUnavailable(t *testing.T) {
	noKey := func(spec string) (llms.Model, error) {
		return nil, errors.New(`model "` + spec + `": OPENAI_API_KEY is not set; export it`)
	}
	h := apptest.New(t, supportApp(t), nil, apptest.Options{Models: noKey})
	url := h.Serve(t)
	for _, tc := range []struct{ path, body string }{
		{"/threads/mu1/runs/wait", apptest.RunBody("/support/acme", "hi")},
		{"/threads/mu2/runs/wait", `{"assistant_id":"/support/acme","input":{"messages":[{"type":"human","content":"hi"}]},"if_not_exists":"create"}`},
		{"/threads/mu3/runs/stream", apptest.RunBody("/support/acme", "hi")},
	} {
		resp := post(t, url+tc.path, tc.body)
		var e struct {
			Error struct {
				Kind    string `json:"kind"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Kind != "model_unavailable" || !strings.Contains(e.Error.Message, "OPENAI_API_KEY") {
			t.Errorf("POST %s: %d %+v, want 503 model_unavailable naming the key", tc.path, resp.StatusCode, e.Error)
		}
	}
}
