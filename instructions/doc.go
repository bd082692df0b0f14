// Package instructions owns the standing-instructions capability: memory.md
// beside a route's agent.md and AGENTS.md at the app folder, rendered into
// the route's system prompt and never written by the agent. Long-term
// memory the agent writes (the memory: key of agent.md, remember and
// recall) is the package longmemory.
//
// It imports capabilities, router and thread; it must not import server,
// store, agent or model code.
package instructions
