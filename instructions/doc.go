// Package memory owns the standing-instructions capability: memory.md
// beside a route's agent.md and AGENTS.md at the app folder, rendered into
// the route's system prompt and never written by the agent. The remember
// and recall tools over the Store are not built yet.
//
// It imports capabilities, router and thread; it must not import server,
// store, agent or model code.
package memory
