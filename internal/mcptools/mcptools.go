// Package mcptools brings the tools of MCP servers into an app's routes. The
// servers are listed under mcp: in dawn.yaml, each a stdio command or a
// streamable-HTTP URL:
//
//	mcp:
//	  everything:
//	    command: npx
//	    args: ["@modelcontextprotocol/server-everything"]
//	  docs:
//	    url: https://docs.example.com/mcp
//	    headers:
//	      Authorization: Bearer ${DOCS_TOKEN}
//
// Each tool of server S named T becomes the app tool S_T (characters other
// than letters, digits, _ and - become _), shared by every route and
// filtered by agent.md tools: like the app's Go tools. Its input schema is
// the server's, passed through; the server validates the input. A result
// the server marks as an error, and any failure to reach the server, is the
// tool's error, shown to the model.
//
// A server's timeout: (a duration such as 30s) bounds each call of its
// tools, instead of dawn.yaml's tools.timeout; its idempotent: (true or
// false) declares its tools idempotent or not, whatever their
// idempotentHint annotation says (ToolSpec.Idempotent).
//
// A server's tools are listed when the app is first loaded with it (they
// make up the routes' tool lists) through a session closed right after; the
// server is started for good at its first tool call, reused across reloads
// while its settings stay the same, started again on the next call after it
// dies, and stopped by a reload whose dawn.yaml drops or changes it, and by
// Shutdown. It uses the official Go SDK,
// github.com/modelcontextprotocol/go-sdk.
package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"
)

// Marker returns the registry entry that reads dawn.yaml's mcp: section and
// supplies the servers' tools (capabilities.ToolSource). It detects no
// marker file.
func Marker() capabilities.Marker { return &marker{} }

type marker struct {
	servers []Server
}

func (m *marker) Name() string                 { return "mcp" }
func (m *marker) Detect(string) (string, bool) { return "", false }
func (m *marker) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}

func (m *marker) ConfigKeys() []string { return []string{Key} }

func (m *marker) Configure(values map[string]*yaml.Node) (capabilities.Marker, error) {
	servers, err := parseServers(values[Key])
	if err != nil {
		return nil, err
	}
	return &marker{servers: servers}, nil
}

// AppTools lists every server's tools (see conn.list) and returns them. A
// server that cannot be reached is an error naming it; the other servers'
// tools are still returned. Servers of appDir that dawn.yaml no longer
// names with the same settings are stopped.
func (m *marker) AppTools(ctx context.Context, appDir string) ([]capabilities.AppTool, error) {
	shared.retain(appDir, m.servers)
	var tools []capabilities.AppTool
	var errs []error
	owner := map[string]string{}
	for _, s := range m.servers {
		c := shared.conn(appDir, s)
		listed, err := c.list(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp.%s: %w", s.Name, err))
			continue
		}
		var names []string
		for _, t := range listed {
			name := ToolName(s.Name, t.Name)
			if other, ok := owner[name]; ok {
				errs = append(errs, fmt.Errorf("mcp.%s: tool %q becomes %q, which server mcp.%s already provides; rename one of the servers in dawn.yaml", s.Name, t.Name, name, other))
				continue
			}
			owner[name] = s.Name
			names = append(names, name)
			schema, err := json.Marshal(t.InputSchema)
			if err != nil || string(schema) == "null" {
				schema = json.RawMessage(`{"type":"object"}`)
			}
			tools = append(tools, capabilities.AppTool{
				Tool: &tool{
					conn: c,
					name: t.Name,
					spec: capabilities.ToolSpec{Name: name, Description: t.Description, Schema: schema, Timeout: s.Timeout, Idempotent: idempotent(s, t)},
				},
				Origin: fmt.Sprintf("tool %q of MCP server %q (dawn.yaml mcp.%s)", name, s.Name, s.Name),
			})
		}
		c.setNames(names)
	}
	return tools, errors.Join(errs...)
}

// idempotent says whether tool t of server s may run again after a crash
// cut an approved call off: as dawn.yaml's idempotent: says for the
// server, else as the tool's idempotentHint annotation says.
func idempotent(s Server, t *mcp.Tool) bool {
	if s.Idempotent != nil {
		return *s.Idempotent
	}
	return t.Annotations != nil && t.Annotations.IdempotentHint
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ToolName is the route tool name of MCP tool tool on server server.
func ToolName(server, tool string) string {
	return server + "_" + unsafeChars.ReplaceAllString(tool, "_")
}

// Sources lists the servers for `dawn routes`: name, transport and, once
// started, the route tool names.
func (m *marker) Sources() []string {
	var out []string
	for _, s := range m.servers {
		line := fmt.Sprintf("MCP server %s (dawn.yaml mcp.%s): %s", s.Name, s.Name, s.Transport())
		if names := shared.names(s); len(names) > 0 {
			line += "; tools: " + strings.Join(names, ", ")
		}
		out = append(out, line)
	}
	return out
}

// Stop stops every MCP server of the process; see Shutdown.
func (m *marker) Stop() { Shutdown() }

// tool is one MCP tool as a route tool.
type tool struct {
	conn *conn
	name string
	spec capabilities.ToolSpec
}

func (t *tool) Spec() capabilities.ToolSpec { return t.spec }

func (t *tool) Call(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	input := inv.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if !json.Valid(input) || !strings.HasPrefix(strings.TrimSpace(string(input)), "{") {
		return capabilities.Result{}, &capabilities.InputError{Tool: t.spec.Name, Msg: "input must be a JSON object"}
	}
	session, err := t.conn.session(ctx)
	if err != nil {
		return capabilities.Result{}, fmt.Errorf("MCP server %q is not available: %w", t.conn.server.Name, err)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: t.name, Arguments: input})
	if err != nil {
		// A JSON-RPC error is the server's answer (an unknown tool, bad
		// arguments); anything else, unless the run was cancelled, means the
		// connection broke, so the next call starts the server again.
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) && ctx.Err() == nil {
			t.conn.forget(session)
			return capabilities.Result{}, fmt.Errorf("MCP server %q stopped during the call (it is started again on the next call): %w", t.conn.server.Name, err)
		}
		return capabilities.Result{}, fmt.Errorf("MCP server %q: %w", t.conn.server.Name, err)
	}
	out, err := output(res)
	if err != nil {
		return capabilities.Result{}, fmt.Errorf("MCP server %q: %w", t.conn.server.Name, err)
	}
	if res.IsError {
		var text string
		if json.Unmarshal(out, &text) != nil {
			text = string(out)
		}
		return capabilities.Result{}, errors.New(text)
	}
	return capabilities.Result{Output: out}, nil
}

// output is what the model sees of a result: its structured content when
// it has some, else its text (a JSON string), else its content list.
func output(res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.StructuredContent != nil && !res.IsError {
		return json.Marshal(res.StructuredContent)
	}
	var texts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			return json.Marshal(res.Content)
		}
		texts = append(texts, tc.Text)
	}
	return json.Marshal(strings.Join(texts, "\n"))
}

// Shutdown stops every MCP server this process started. The CLI calls it
// on its way out; a test that loads an app with MCP servers calls it in
// t.Cleanup.
func Shutdown() { shared.shutdown() }
