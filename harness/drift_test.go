package harness

import (
	"encoding/json"
	"testing"
)

// TestDiffItems: what a revision changed, item by item.
func TestDiffItems(t *testing.T) {
	a, b, c := Item{ID: "a", Content: "A", Status: Completed}, Item{ID: "b", Content: "B", Status: InProgress}, Item{ID: "c", Content: "C", Status: Pending}
	cases := []struct {
		name      string
		old, next []Item
		want      string
	}{
		{"nothing", []Item{a, b}, []Item{a, b}, `{}`},
		{"added", []Item{a}, []Item{a, {ID: "d", Content: "D"}}, `{"added":["D"]}`},
		{"dropped", []Item{a, b, c}, []Item{a, c}, `{"removed":[{"id":"b","content":"B","status":"in_progress","dropped":true}]}`},
		{"finished and removed", []Item{a, b}, []Item{b}, `{"removed":[{"id":"a","content":"A","status":"completed"}]}`},
		{"reworded in place", []Item{a, b}, []Item{a, {ID: "e", Content: "B2", Status: InProgress}}, `{"reworded":[{"id":"b","from":"B","to":"B2","status":"in_progress"}]}`},
		{"reordered", []Item{a, b}, []Item{b, a}, `{"reordered":true}`},
		{"backwards", []Item{a}, []Item{{ID: "a", Content: "A", Status: Pending}}, `{"backwards":[{"id":"a","content":"A","from":"completed","to":"pending"}]}`},
	}
	for _, tc := range cases {
		raw, _ := json.Marshal(diffItems(tc.old, tc.next))
		if string(raw) != tc.want {
			t.Errorf("%s: diff %s, want %s", tc.name, raw, tc.want)
		}
	}
	p := &Plan{}
	for range MaxRevisions + 5 {
		p.revise("model", "", "x")
	}
	p.reviseDiff("model", "", "x", &Diff{Removed: []Removed{{ID: "b", Content: "B", Dropped: true}}})
	if len(p.Revisions) != MaxRevisions || p.Trimmed != 6 || p.RevisionN != MaxRevisions+6 || len(p.Dropped) != 1 || p.Dropped[0].Revision != p.RevisionN {
		t.Fatalf("after %d revisions: kept %d, trimmed %d, dropped %+v", p.RevisionN, len(p.Revisions), p.Trimmed, p.Dropped)
	}
}
