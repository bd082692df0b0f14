package main

import (
	"net/http"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
)

// TestReleaseRouteVerifies runs /release over HTTP with the offline model:
// the notes subagent's plan is nested under the item in progress when it
// is handed the work, and each item and the postcondition the model
// claims is checked by its verifier (the releaseChanges tool, the
// namesItem verifier) before the plan is done; its revisions are served.
func TestReleaseRouteVerifies(t *testing.T) {
	h := dawntest.New(t, ".", models.NewOffline(), dawntest.Options{Tools: appTools(), Markers: appMarkers()})
	if res := h.Run(t, "release-1", "/release", "Ship v1.4.0"); res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	var p harness.Plan
	if code := apptest.GetJSON(t, h.URL+"/threads/release-1/plan", &p); code != http.StatusOK {
		t.Fatalf("GET plan = %d", code)
	}
	if p.State != harness.Done {
		t.Fatalf("plan %s (%s): %+v", p.State, p.Reason, p.Items)
	}
	want := []string{"tool: releaseChanges", "verifier: namesItem"}
	for i, it := range p.Items {
		if v := it.Verification; v == nil || !v.Passed || v.VerifiedBy != want[i] {
			t.Errorf("item %d %q verification = %+v, want passed by %s", i, it.Content, v, want[i])
		}
	}
	if c := p.Items[0].Children; len(c) != 1 || c[0].Subagent != "notes" || len(c[0].Todos) != 2 {
		t.Errorf("item 1's children = %+v, want the notes subagent's plan", c)
	}
	if pc := p.Postconditions[0]; !pc.Verified || pc.Verification == nil || pc.Verification.VerifiedBy != "tool: releaseChanges" {
		t.Errorf("postcondition = %+v, want verified by releaseChanges", pc)
	}
	var revs struct {
		Revisions []harness.Revision `json:"revisions"`
		Total     int                `json:"total"`
	}
	if code := apptest.GetJSON(t, h.URL+"/threads/release-1/plan/revisions", &revs); code != http.StatusOK || len(revs.Revisions) == 0 || revs.Total < len(revs.Revisions) {
		t.Fatalf("GET revisions = %d %+v", code, revs)
	}
}
