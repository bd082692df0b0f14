package capabilities

import (
	"os"
	"path/filepath"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"github.com/dawn-go/dawn/router"
	"gopkg.in/yaml.v3"
)

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

// FrontMatterOn is the Detect of a FrontMatterSection marker: it reports
// "agent.md" when the agent.md in dir sets key to anything but false or
// null. An agent.md that cannot be read or parsed switches nothing on (route
// discovery reports it).
func FrontMatterOn(dir, key string) (file string, ok bool) {
	const agentFile = "agent.md"
	path := filepath.Join(dir, agentFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	a, err := router.ParseAgentWith(path, data, router.Claims{Any: true})
	if err != nil {
		return "", false
	}
	n := a.Sections[key]
	if n == nil || yamldoc.IsNull(n) {
		return "", false
	}
	var b bool
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" && n.Decode(&b) == nil {
		return agentFile, b
	}
	return agentFile, true
}
