// Package mcp is the MCP wire of Dawn's HTTP API: every route that is not a
// subagent is served as an MCP tool at /mcp (Streamable HTTP, stateless),
// with the official Go SDK. A tool call runs the route through the same
// runner as Dawn's runs and answers with the run's answer, its interrupts
// when it parks, and progress notifications for capability events.
//
// It owns the tool names and input schemas (tools.go) and the translation
// of one run to a tool result (call.go). It mounts on a wire.Host and
// names no capability.
package mcp
