// Package a2acall is the capability that calls remote A2A agents as
// subagents: a folder under a route's subagents/ with an a2a.yaml (the
// agent's card URL and a credential's environment variable) instead of an
// agent.md becomes a remote subagent the route's task tool hands work to,
// over the A2A protocol's JSON-RPC binding (github.com/a2aproject/a2a-go).
//
// It imports capabilities, router and stream; never the server, runner or
// store.
package a2acall
