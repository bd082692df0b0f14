package planfirst

import (
	"testing"

	"github.com/dawn-go/dawn/capabilities"
)

// TestOfflineReply: the offline model learns plan-first's requests from the
// marker, not by importing planfirst.
func TestOfflineReply(t *testing.T) {
	s, ok := Marker().(capabilities.OfflineScript)
	if !ok {
		t.Fatal("the plan-first marker is not an OfflineScript")
	}
	reply, own := s.OfflineReply(Directive("Fix   the bug", []string{"/other"}, []string{"researcher", "writer"}))
	want := `{"goal":"Answer: Fix the bug","steps":[{"id":"E1","task":"Work out what is being asked: Fix the bug"},{"deps":["E1"],"id":"E2","subagent":"researcher","task":"Work on the task using what step E1 found: #E1.summary"},{"deps":["E2"],"id":"E3","task":"Check the result of step E2: #E2.head=200"}]}`
	if !own || reply != want {
		t.Errorf("directive: reply %s, own %v; want %s", reply, own, want)
	}
	if _, err := Parse(reply); err != nil {
		t.Errorf("the offline plan does not parse: %v", err)
	}
	if reply, own := s.OfflineReply(ReportPrefix + " 3 steps"); !own || reply != "" {
		t.Errorf("report: reply %q, own %v; want none, own", reply, own)
	}
	if reply, own := s.OfflineReply("What is our refund policy?"); own || reply != "" {
		t.Errorf("user text: reply %q, own %v; want neither", reply, own)
	}
}
