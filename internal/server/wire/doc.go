// Package wire is the seam between Dawn's HTTP core (internal/server) and
// each wire protocol it speaks: Dawn's own (internal/server/dawn) and
// internal/server/langgraph, agui, openai, mcp and a2a, as net/http's
// server is to HTTP/2.
//
// It owns the Host a wire mounts its endpoints on and reads runs and
// threads through, the API error every wire answers with, and the small
// helpers every wire reads requests and writes event streams with.
package wire
