package eval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

func ev(typ, data string) stream.Event { return stream.Event{Type: typ, Data: json.RawMessage(data)} }

// TestDriftExpectations: no_dropped_items and max_revisions read a
// harness-owned plan's plan_revised events, and a plain plan's successive
// plan_update lists.
func TestDriftExpectations(t *testing.T) {
	done := ev(stream.TypeDone, `{"output":{"messages":[]}}`)
	no, yes := false, true
	cases := []struct {
		name   string
		events []stream.Event
		expect DriftExpect
		pass   []bool
		detail string
	}{
		{"harness plan drops an item", []stream.Event{
			ev("plan_revised", `{"n":3,"source":"model","diff":{"removed":[{"id":"s0002","content":"Write the tests","status":"pending","dropped":true}]}}`),
			ev("plan_revised", `{"n":4,"source":"model","diff":{"added":["Write the docs"]}}`), done,
		}, DriftExpect{NoDroppedItems: &yes, MaxRevisions: 1}, []bool{false, false}, `"Write the tests"`},
		{"harness plan finishes what it removes", []stream.Event{
			ev("plan_revised", `{"n":3,"diff":{"removed":[{"content":"Done already","status":"completed"}]}}`), done,
		}, DriftExpect{NoDroppedItems: &yes, MaxRevisions: 1}, []bool{true, true}, ""},
		{"plain plan drops an item", []stream.Event{
			ev("plan_update", `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending"}]}`),
			ev("plan_update", `{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"pending"}]}`),
			ev("plan_update", `{"todos":[{"content":"a","status":"completed"}]}`), done,
		}, DriftExpect{NoDroppedItems: &yes, MaxRevisions: 2}, []bool{false, true}, `"b"`},
		{"expecting a drop that did not happen", []stream.Event{
			ev("plan_update", `{"todos":[{"content":"a","status":"pending"}]}`), done,
		}, DriftExpect{NoDroppedItems: &no}, []bool{false}, "dropped no item"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkDrift(c.expect, Observe(c.events))
			if len(got) != len(c.pass) {
				t.Fatalf("results %+v, want %d", got, len(c.pass))
			}
			for i, r := range got {
				if r.Pass != c.pass[i] {
					t.Errorf("%s pass = %v (%s), want %v", r.Expectation, r.Pass, r.Detail, c.pass[i])
				}
			}
			if c.detail != "" && !strings.Contains(got[0].Detail, c.detail) {
				t.Errorf("detail %q does not name %s", got[0].Detail, c.detail)
			}
		})
	}
	cs, err := Parse("evals/drift.yaml", "/job", []byte("cases:\n  - name: a\n    input: {message: go}\n    expect: {no_dropped_items: true, max_revisions: 2}\n"))
	if err != nil || len(cs) != 1 || cs[0].Expect.NoDroppedItems == nil || cs[0].Expect.MaxRevisions != 2 {
		t.Fatalf("parsed %+v, %v", cs, err)
	}
	if names := strings.Join(cs[0].Expect.Names(), ","); names != "run,no_dropped_items,max_revisions" {
		t.Fatalf("names %s", names)
	}
	if _, err := Parse("evals/drift.yaml", "/job", []byte("cases:\n  - name: a\n    input: {message: go}\n    expect: {max_revisions: 0}\n")); err == nil || !strings.Contains(err.Error(), "expect.max_revisions") {
		t.Fatalf("max_revisions: 0 gave %v", err)
	}
}
