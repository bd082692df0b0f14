// Package server is Dawn's HTTP API on echo. It owns the core every wire
// shares (the mux, API key auth, CORS, body and connection limits, and
// JSON errors of the form
// {"error":{"kind":"…","message":"…","details":{"code":"…"}}}) and Dawn's
// own wire: health, routes, threads, runs (wait, and an SSE stream a
// client rejoins by Last-Event-ID from any replica), cancel, resume, and
// the endpoints capabilities add under /threads/:id/.
//
// The other wires are packages of their own, which the core does not
// import: each is a wire.Wire registered with wire.Register (the package
// internal/server/wires registers them all), and New mounts every
// registered wire through the wire.Host the core offers. They are the
// LangGraph Agent Server dialect (internal/server/langgraph), AG-UI
// (internal/server/agui), the OpenAI-compatible API
// (internal/server/openai), MCP (internal/server/mcp) and A2A
// (internal/server/a2a). The core owns
// HTTP only: the rules of a run (admission, multitask strategies, the
// queue, ownership) are the runs service's (internal/runs), and running
// them is the runner's.
package server
