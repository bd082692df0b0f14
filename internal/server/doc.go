// Package server is the core of Dawn's HTTP API on echo, which every wire
// shares: the mux, authentication, CORS, body and connection limits, the
// audit of calls, health probes, JSON errors of the form
// {"error":{"kind":"…","message":"…","details":{"code":"…"}}}, the
// endpoints capabilities add under /threads/:id/, and the one place
// where the requests to a path two wires share are told apart (handle).
//
// Every wire is a package of its own, which the core does not import:
// each is a wire.Wire registered with wire.Register (the package
// internal/server/wires registers them all), and New mounts every
// registered wire through the wire.Host the core offers. They are Dawn's
// own (internal/server/dawn), whose handlers are the default handlers of
// the shared paths, the LangGraph Agent Server dialect
// (internal/server/langgraph), AG-UI (internal/server/agui), the
// OpenAI-compatible API (internal/server/openai), MCP
// (internal/server/mcp) and A2A (internal/server/a2a). The core owns
// HTTP only: the rules of a run (admission, multitask strategies, the
// queue, ownership) are the runs service's (internal/runs), and running
// them is the runner's.
package server
