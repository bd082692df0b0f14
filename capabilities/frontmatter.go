package capabilities

import "github.com/dawn-go/dawn/router"

// FrontMatterSection is a marker with settings of its own in agent.md's
// front matter, under keys it names ("workspace"). Route discovery accepts
// those keys in every agent.md and keeps their values in
// router.Agent.Sections, which the marker parses itself; an error names
// route.Agent.File, the key and what to write. Any other unknown key stays
// an error.
type FrontMatterSection interface {
	FrontMatterKeys() []string
}

// FrontMatterClaims returns the front matter keys ms claim, for
// router.DiscoverWith.
func FrontMatterClaims(ms []Marker) router.Claims {
	var c router.Claims
	for _, m := range ms {
		if s, ok := m.(FrontMatterSection); ok {
			c.Keys = append(c.Keys, s.FrontMatterKeys()...)
		}
	}
	return c
}
