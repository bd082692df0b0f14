// Package wires registers the wire protocols Dawn's server speaks: Dawn's
// own (first: its endpoints are the default handlers of the paths it
// shares), the LangGraph Agent Server dialect, AG-UI, the
// OpenAI-compatible API, MCP and A2A. A program that serves Dawn's API
// imports it for its side effect, as one imports a database/sql driver:
//
//	import _ "github.com/dawn-go/dawn/internal/server/wires"
//
// The HTTP core (internal/server) imports no wire; it mounts the wires
// registered with wire.Register, in the order this package registers
// them. The order is part of the wire bytes: the first wire that claims
// a request to one of Dawn's endpoints serves it, and the response
// headers the wires expose to browsers are listed in this order.
package wires

import (
	"github.com/dawn-go/dawn/internal/server/a2a"
	"github.com/dawn-go/dawn/internal/server/agui"
	"github.com/dawn-go/dawn/internal/server/dawn"
	"github.com/dawn-go/dawn/internal/server/langgraph"
	"github.com/dawn-go/dawn/internal/server/mcp"
	"github.com/dawn-go/dawn/internal/server/openai"
	"github.com/dawn-go/dawn/internal/server/wire"
)

func init() { wire.Register(All()...) }

// All are the wires this package registers, in the order the server
// mounts them.
func All() []wire.Wire {
	return []wire.Wire{
		{Name: "dawn", Mount: dawn.Mount},
		{Name: "langgraph", Mount: langgraph.Mount},
		{Name: "agui", Mount: func(h wire.Host) { agui.Mount(h) }},
		{Name: "openai", Mount: func(h wire.Host) { openai.Mount(h) }},
		{Name: "mcp", Mount: func(h wire.Host) { mcp.Mount(h) }},
		{Name: "a2a", Mount: func(h wire.Host) { a2a.Mount(h) }},
	}
}
