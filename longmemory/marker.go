package longmemory

import (
	"context"
	"fmt"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"github.com/dawn-go/dawn/router"
	"gopkg.in/yaml.v3"
)

// Name is the capability's name.
const Name = "long_term_memory"

// Key is the agent.md front matter key that switches the capability on.
const Key = "memory"

// example is the settings' shape, for error messages.
const example = `memory: true, or memory: {writes: candidate, recall_limit: 5, approve_replace: true}`

// defaultLimit is how many memories recall returns when neither the model
// nor agent.md says.
const defaultLimit = 5

// maxLimit bounds what recall returns in one call.
const maxLimit = 50

// Marker returns the long-term memory capability.
func Marker() capabilities.Marker { return marker{} }

type marker struct{}

func (marker) Name() string { return Name }

// FrontMatterKeys claims the memory key of agent.md
// (capabilities.FrontMatterSection).
func (marker) FrontMatterKeys() []string { return []string{Key} }

// Detect finds routes whose agent.md sets memory: to anything but false
// or null.
func (marker) Detect(dir string) (string, bool) { return capabilities.FrontMatterOn(dir, Key) }

// Settings are a route's memory settings as agent.md writes them.
type Settings struct {
	// RecallLimit is how many memories recall returns by default.
	RecallLimit int `json:"recall_limit"`
	// ApproveReplace holds a remember that would replace a memory kept
	// under the same key for a person's decision (interrupt kind memory).
	ApproveReplace bool `json:"approve_replace,omitempty"`
	// Writes governs what remember does (Writes*); "" is WritesAuto.
	Writes string `json:"writes,omitempty"`
}

// The ways a route's remember may write (memory: {writes: …}).
const (
	// WritesAuto keeps a memory at once; the default, as before writes
	// were governed.
	WritesAuto = "auto"
	// WritesCandidate keeps it as a candidate that recall does not find
	// until a person approves it (the memory endpoints, dawn memory).
	WritesCandidate = "candidate"
	// WritesAsk parks the run with a memory interrupt until a person
	// approves, edits or rejects the write.
	WritesAsk = "ask"
	// WritesOff gives the route recall and no remember.
	WritesOff = "off"
)

// ParseSettings reads the memory section of agent.md: true, or a mapping
// {recall_limit, approve_replace}. An error says what to write.
func ParseSettings(n *yaml.Node) (Settings, error) {
	s := Settings{RecallLimit: defaultLimit, Writes: WritesAuto}
	n = yamldoc.Resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!bool" {
			return s, nil
		}
	case yaml.MappingNode:
		for k, v := range yamldoc.Pairs(n) {
			if err := s.set(k.Value, yamldoc.Resolve(v)); err != nil {
				return s, err
			}
		}
		return s, nil
	}
	return s, fmt.Errorf("front matter key %q must be %s", Key, example)
}

func (s *Settings) set(key string, v *yaml.Node) error {
	switch key {
	case "recall_limit":
		n, ok := yamldoc.Int(v)
		if !ok || n < 1 || n > maxLimit {
			return fmt.Errorf("%s.recall_limit must be a whole number from 1 to %d, like %s", Key, maxLimit, example)
		}
		s.RecallLimit = n
	case "writes":
		switch v.Value {
		case WritesAuto, WritesCandidate, WritesAsk, WritesOff:
			if v.Kind == yaml.ScalarNode {
				s.Writes = v.Value
				return nil
			}
		}
		return fmt.Errorf("%s.writes must be one of off, candidate, auto, ask, like %s", Key, example)
	case "approve_replace":
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&s.ApproveReplace) != nil {
			return fmt.Errorf("%s.approve_replace must be true or false, like %s", Key, example)
		}
	default:
		return fmt.Errorf("%s: unknown key %q; the allowed keys are writes, recall_limit and approve_replace, like %s", Key, key, example)
	}
	return nil
}

func (marker) Load(_ context.Context, route *router.Route, _ string) (*capabilities.Contribution, error) {
	n := route.Agent.Sections[Key]
	if n == nil {
		return nil, fmt.Errorf("%s: front matter key %q is missing", route.Agent.File, Key)
	}
	s, err := ParseSettings(n)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %v", route.Agent.File, n.Line+1, err)
	}
	ns := Namespace(route.ID)
	details := map[string]any{"namespace": ns, "recall_limit": s.RecallLimit, "writes": s.Writes}
	w := writer{ns: ns, route: route.ID, mode: s.Writes}
	c := &capabilities.Contribution{Tools: []capabilities.Tool{recallTool(ns, s.RecallLimit)}, Details: details}
	if s.Writes != WritesOff {
		c.Tools = append([]capabilities.Tool{rememberTool(w)}, c.Tools...)
	}
	if s.ApproveReplace {
		details["approve_replace"] = true
	}
	if (s.ApproveReplace && s.Writes == WritesAuto) || s.Writes == WritesAsk {
		g := gate{ns: ns, ask: s.Writes == WritesAsk, replace: s.ApproveReplace}
		c.Hooks = &capabilities.Hooks{BeforeToolCtx: g.beforeTool, Resolve: g.resolve}
	}
	return c, nil
}

// Namespace is the store namespace of a route's memories: ["memories",
// the route id], with each period of the id written %2E (a namespace
// label holds no periods).
func Namespace(routeID string) []string {
	return []string{"memories", strings.ReplaceAll(routeID, ".", "%2E")}
}
