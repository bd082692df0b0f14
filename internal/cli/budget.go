package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
)

// contextCapability is the capability that holds a route's context
// settings (`context:` in dawn.yaml and agent.md); its details carry the
// budget as max_input_tokens.
const contextCapability = "context"

// budgetWarnings warns of each route whose fixed part of a request (its
// system prompt, state block and tool definitions, before any
// conversation) alone is over its context.max_input_tokens: every request
// would be over the budget however much is compacted.
func budgetWarnings(a *app.App, env func(string) string) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(a.Routes)) {
		p := a.Routes[id]
		budget := maxInputTokens(p)
		if budget <= 0 {
			continue
		}
		model := a.ModelFor(p.Route, env)
		if fixed := agent.FixedTokens(p, model); fixed > budget {
			out = append(out, fmt.Sprintf("route %s: its system prompt and tool definitions alone are about %d tokens (model %s), more than context.max_input_tokens (%d), so every request is over the budget before the conversation starts; raise max_input_tokens, or shorten %s or the route's tools",
				id, fixed, model, budget, p.Route.Agent.File))
		}
	}
	return out
}

// maxInputTokens is the route's context.max_input_tokens, or 0 when it
// has none.
func maxInputTokens(p *capabilities.Prepared) int {
	for _, c := range p.Capabilities {
		if c.Name != contextCapability || c.Details == nil {
			continue
		}
		raw, err := json.Marshal(c.Details)
		if err != nil {
			return 0
		}
		var s struct {
			MaxInputTokens int `json:"max_input_tokens"`
		}
		if json.Unmarshal(raw, &s) == nil {
			return s.MaxInputTokens
		}
	}
	return 0
}
