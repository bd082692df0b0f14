package capabilities

import (
	"slices"
	"testing"
)

// sectionMarker claims front matter keys.
type sectionMarker struct {
	fakeMarker
	keys []string
}

func (m sectionMarker) FrontMatterKeys() []string { return m.keys }

// TestFrontMatterClaims: the claims are the keys of the markers that claim
// some, in marker order; markers without FrontMatterSection add none.
func TestFrontMatterClaims(t *testing.T) {
	ms := []Marker{
		fakeMarker{name: "plain"},
		sectionMarker{fakeMarker: fakeMarker{name: "a"}, keys: []string{"workspace"}},
		sectionMarker{fakeMarker: fakeMarker{name: "b"}, keys: []string{"memory", "skills"}},
	}
	c := FrontMatterClaims(ms)
	if !slices.Equal(c.Keys, []string{"workspace", "memory", "skills"}) || c.Any {
		t.Fatalf("claims %+v", c)
	}
	if c := FrontMatterClaims([]Marker{fakeMarker{name: "plain"}}); len(c.Keys) != 0 || c.Any {
		t.Fatalf("claims of a plain marker: %+v", c)
	}
}
