package langgraph_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestLangGraphBadCrons: cron requests Dawn cannot keep are refused with
// a 4xx that names the field, and none of them is stored.
func TestLangGraphBadCrons(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("Hi.").Repeat(), apptest.Options{})
	url := h.Serve(t)
	tests := []struct {
		name, path, body, says string
		status                 int
	}{
		{"no schedule", "/runs/crons", `{"assistant_id":"/plain"}`, "schedule is required", 400},
		{"bad schedule", "/runs/crons", `{"assistant_id":"/plain","schedule":"61 * * * *"}`, "five fields", 400},
		{"seconds field", "/runs/crons", `{"assistant_id":"/plain","schedule":"*/2 * * * * *"}`, "five fields", 400},
		{"bad time zone", "/runs/crons", `{"assistant_id":"/plain","schedule":"0 9 * * *","timezone":"Mars/Olympus"}`, "IANA name", 400},
		{"bad end_time", "/runs/crons", `{"assistant_id":"/plain","schedule":"0 9 * * *","end_time":"tomorrow"}`, "end_time must be an RFC 3339 time", 400},
		{"on_run_completed", "/runs/crons", `{"assistant_id":"/plain","schedule":"0 9 * * *","on_run_completed":"archive"}`, "on_run_completed must be one of", 400},
		{"webhook", "/runs/crons", `{"assistant_id":"/plain","schedule":"0 9 * * *","webhook":"https://example.com/"}`, "webhook", 400},
		{"command", "/runs/crons", `{"assistant_id":"/plain","schedule":"0 9 * * *","command":{"resume":1}}`, "command is not supported", 400},
		{"unknown assistant", "/runs/crons", `{"assistant_id":"/nowhere","schedule":"0 9 * * *"}`, `No assistant found for "/nowhere"`, 404},
		{"unknown thread", "/threads/missing/runs/crons", `{"assistant_id":"/plain","schedule":"0 9 * * *"}`, "missing", 404},
		{"never fires", "/runs/crons", `{"assistant_id":"/plain","schedule":"0 0 30 2 *"}`, `schedule "0 0 30 2 *" never fires`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, url+tt.path, tt.body)
			e := decodeErr(t, resp)
			if resp.StatusCode != tt.status || !strings.Contains(e.Error.Message, tt.says) {
				t.Errorf("status %d %q; want %d saying %q", resp.StatusCode, e.Error.Message, tt.status, tt.says)
			}
		})
	}
	resp := post(t, url+"/runs/crons/count", `{}`)
	var n int
	err := json.NewDecoder(resp.Body).Decode(&n)
	resp.Body.Close()
	if err != nil || n != 0 {
		t.Errorf("refused requests stored %d crons", n)
	}
	req, _ := http.NewRequest(http.MethodPatch, url+"/runs/crons/nope", strings.NewReader(`{"enabled":false}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusNotFound || e.Error.Kind != "cron_not_found" || !strings.Contains(e.Error.Message, `cron "nope"`) {
		t.Errorf("PATCH of an unknown cron: %d %s %q, want 404 cron_not_found naming it", resp.StatusCode, e.Error.Kind, e.Error.Message)
	}
	req, _ = http.NewRequest(http.MethodDelete, url+"/runs/crons/nope", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusNotFound || e.Error.Kind != "cron_not_found" {
		t.Errorf("DELETE of an unknown cron: %d %s %q, want 404 cron_not_found", resp.StatusCode, e.Error.Kind, e.Error.Message)
	}
	// A schedule that never fires is refused on update too.
	var made struct {
		CronID string `json:"cron_id"`
	}
	resp = post(t, url+"/runs/crons", `{"assistant_id":"/plain","schedule":"0 9 * * *"}`)
	if err := json.NewDecoder(resp.Body).Decode(&made); err != nil || made.CronID == "" {
		t.Fatalf("creating a cron: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	req, _ = http.NewRequest(http.MethodPatch, url+"/runs/crons/"+made.CronID, strings.NewReader(`{"schedule":"0 0 31 4 *"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if e := decodeErr(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error.Message, "never fires") {
		t.Errorf("PATCH to a schedule that never fires: %d %q, want 400", resp.StatusCode, e.Error.Message)
	}
}
