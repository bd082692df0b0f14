package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestAfterSecondsOutOfRange: a delay too long to keep (past a year, or
// one whose start time overflows the clock) is a 400 naming
// after_seconds, and the run neither starts nor waits in the queue.
// Before, 1e10 seconds wrapped around to a time in the past and the run
// started at once.
func TestAfterSecondsOutOfRange(t *testing.T) {
	model := dawntest.Script().Reply("ran").Repeat()
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	base := h.Serve(t)
	for _, secs := range []float64{1e10, 1e12, 31536001} {
		resp := post(t, base+"/threads/late/runs/wait", multitaskBody("later", map[string]any{"after_seconds": secs}))
		e := decodeErr(t, resp)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Kind != "invalid_body" || !strings.Contains(e.Error.Message, "after_seconds must be at most 31536000") {
			t.Errorf("after_seconds %g: %d %+v, want 400 invalid_body naming after_seconds and its limit", secs, resp.StatusCode, e)
		}
	}
	if n := model.Calls(); n != 0 {
		t.Errorf("the model was called %d times; a refused delay must start no run", n)
	}
}
