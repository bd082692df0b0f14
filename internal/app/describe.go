package app

import (
	"encoding/json"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
)

// RouteInfo describes one route for `dawn routes --json` and GET /routes.
type RouteInfo struct {
	ID          string            `json:"id"`
	Dir         string            `json:"dir"`
	Kind        string            `json:"kind"`
	Params      []string          `json:"params"`
	Description string            `json:"description,omitempty"`
	Model       string            `json:"model"`
	Tools       []string          `json:"tools"`
	Subagents   map[string]string `json:"subagents,omitempty"`
	Parent      string            `json:"parent,omitempty"`
	// Capabilities names the capabilities switched on, in marker order.
	Capabilities []string `json:"capabilities"`
	// Details holds each capability's details by name (planning: its seed).
	Details map[string]any `json:"details,omitempty"`
	// Seed is the planning seed todos when planning is on.
	Seed     any      `json:"seed,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Error says why the route cannot run; such a route has no capabilities.
	Error string `json:"error,omitempty"`
}

// Describe lists every discovered route, prepared or not, sorted by id.
func (a *App) Describe(env func(string) string) []RouteInfo {
	if a.Tree == nil {
		return []RouteInfo{}
	}
	out := make([]RouteInfo, 0, len(a.Tree.Routes))
	for _, r := range a.Tree.Routes {
		out = append(out, a.describe(r, env))
	}
	return out
}

func (a *App) describe(r *router.Route, env func(string) string) RouteInfo {
	info := RouteInfo{
		ID: r.ID, Dir: r.RelDir, Kind: r.Kind, Params: r.Params, Description: r.Agent.Description,
		Model: a.ModelFor(r, env), Subagents: r.Subagents, Parent: r.Parent,
		Tools: []string{}, Capabilities: []string{},
	}
	if info.Params == nil {
		info.Params = []string{}
	}
	p, ok := a.Routes[r.ID]
	if !ok {
		info.Error = "route failed to prepare; run `dawn check`"
		return info
	}
	for _, t := range p.Tools {
		info.Tools = append(info.Tools, t.Spec().Name)
	}
	if len(r.Subagents) > 0 {
		info.Tools = append(info.Tools, capabilities.ReservedToolName)
	}
	for _, c := range p.Capabilities {
		info.Capabilities = append(info.Capabilities, c.Name)
		if c.Details != nil {
			if info.Details == nil {
				info.Details = map[string]any{}
			}
			info.Details[c.Name] = c.Details
			var d struct {
				Seed json.RawMessage `json:"seed"`
			}
			if raw, err := json.Marshal(c.Details); err == nil && json.Unmarshal(raw, &d) == nil && d.Seed != nil {
				info.Seed = d.Seed
			}
		}
	}
	info.Warnings = p.Warnings
	return info
}
