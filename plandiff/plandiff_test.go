package plandiff

import (
	"fmt"
	"testing"

	"github.com/dawn-go/dawn/todo"
)

// TestMatch: an item keeps the id of the first old item with its text;
// a new text gets a new id.
func TestMatch(t *testing.T) {
	old := []Item{{ID: "t1", Content: "A"}, {ID: "t2", Content: "B"}, {ID: "t3", Content: "A"}}
	n := 3
	newID := func() string { n++; return fmt.Sprintf("t%d", n) }
	got := Match(old, []Item{{Content: "A"}, {Content: "C"}, {Content: "A"}, {Content: "A"}}, newID)
	want := []string{"t1", "t4", "t3", "t5"}
	for i, it := range got {
		if it.ID != want[i] {
			t.Fatalf("ids = %+v, want %v", got, want)
		}
	}
}

// TestLogPage: the log keeps MaxRevisions, counts the rest as trimmed,
// keeps dropped items past trimming, and pages by after and limit.
func TestLogPage(t *testing.T) {
	var l Log
	l.Add(SourceModel, "", "x", &Diff{Removed: []Removed{{ID: "b", Content: "B", Status: todo.Pending, Dropped: true}}})
	for range MaxRevisions + 4 {
		l.Add(SourceModel, " why ", "x", nil)
	}
	if len(l.Revisions) != MaxRevisions || l.Trimmed != 5 || l.RevisionN != MaxRevisions+5 || len(l.Dropped) != 1 || l.Dropped[0].Revision != 1 || l.Revisions[0].Reason != "why" {
		t.Fatalf("log = %d kept, %d trimmed, n %d, dropped %+v", len(l.Revisions), l.Trimmed, l.RevisionN, l.Dropped)
	}
	p := l.Page("t", 0, 2)
	if len(p.Revisions) != 2 || p.Revisions[0].N != 6 || p.NextAfter != 7 || p.Total != l.RevisionN || p.Trimmed != 5 {
		t.Fatalf("first page = %+v", p)
	}
	if last := l.Page("t", l.RevisionN-1, 5); len(last.Revisions) != 1 || last.NextAfter != 0 {
		t.Fatalf("last page = %+v", last)
	}
	if since := l.Since(0); len(since) != 0 {
		t.Fatalf("Since(0) = %+v; the revision with a diff was trimmed", since)
	}
}
