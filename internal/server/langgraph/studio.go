package langgraph

import (
	"encoding/json"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/labstack/echo/v4"
)

// This file serves what LangGraph Studio and other tools read of a
// self-hosted server besides runs and threads: GET /info and /ok, and an
// assistant's schemas, graph and subgraphs.

// serverInfo is GET /info: what the server is and which LangGraph
// features it serves.
func (s *dialect) serverInfo(c echo.Context) error {
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	return c.JSON(http.StatusOK, map[string]any{
		"version": version,
		"context": "go",
		"flags":   map[string]any{"assistants": true, "crons": true, "langsmith": false, "langsmith_tracing_replicas": false},
		"host":    map[string]any{"kind": "self-hosted", "project_id": nil, "revision_id": nil, "tenant_id": nil},
	})
}

// serverOK is GET /ok.
func serverOK(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]bool{"ok": true})
}

// graphSchema is GET /assistants/:id/schemas.
type graphSchema struct {
	GraphID       string         `json:"graph_id"`
	InputSchema   map[string]any `json:"input_schema"`
	OutputSchema  map[string]any `json:"output_schema"`
	StateSchema   map[string]any `json:"state_schema"`
	ConfigSchema  map[string]any `json:"config_schema"`
	ContextSchema map[string]any `json:"context_schema"`
}

func (s *dialect) assistantSchemas(c echo.Context) error {
	a := s.host.App()
	found, err := s.resolveAssistant(c.Request().Context(), assistantParam(c))
	if err != nil {
		return err
	}
	r := found.route
	p, ok := a.Routes[r.ID]
	if !ok {
		return &app.BrokenRouteError{Route: r.ID}
	}
	return c.JSON(http.StatusOK, schemasOf(p))
}

// schemasOf derives a route's schemas from its state fields and params:
// the state is messages (marked langgraph_type "messages") plus every
// field, the input messages plus the fields a run may set (those no
// capability owns), and the config and context the keys a run may set
// (settableKeys).
func schemasOf(p *capabilities.Prepared) graphSchema {
	r := p.Route
	message := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"type":    map[string]any{"type": "string", "enum": []string{"human", "ai", "tool", "system"}},
			"role":    map[string]any{"type": "string", "enum": []string{"user", "assistant", "tool", "system"}},
			"id":      map[string]any{"type": "string"},
			"content": map[string]any{"type": "string"},
		},
	}
	// langgraph_type marks the messages channel as LangGraph marks one
	// (jsonSchemaExtra), where Studio and other tools look for the chat.
	messages := func() map[string]any {
		return map[string]any{"type": "array", "items": message, "langgraph_type": "messages"}
	}
	state := map[string]any{"messages": messages()}
	input := map[string]any{"messages": messages()}
	for _, f := range p.Fields {
		var fs map[string]any
		if len(f.Schema) == 0 || json.Unmarshal(f.Schema, &fs) != nil {
			fs = map[string]any{"type": f.Type}
		}
		if len(f.Default) > 0 {
			var d any
			if json.Unmarshal(f.Default, &d) == nil {
				fs["default"] = d
			}
		}
		if f.Capability != "" {
			fs["readOnly"] = true
		} else {
			input[f.Name] = fs
		}
		state[f.Name] = fs
	}
	object := func(title string, props map[string]any) map[string]any {
		return map[string]any{"title": title, "type": "object", "properties": props}
	}
	settable := settableKeys(p)
	return graphSchema{
		GraphID:       graphName(r.ID),
		InputSchema:   object("Input of "+r.ID, input),
		OutputSchema:  object("State of "+r.ID, state),
		StateSchema:   object("State of "+r.ID, state),
		ConfigSchema:  object("Configurable of "+r.ID, settable),
		ContextSchema: object("Context of "+r.ID, settable),
	}
}

// settableKeys are the keys of config.configurable and context a run or
// an assistant of route p may set (see overrides.go): the model, the
// temperature, the tool allow-list and the route's params. LangGraph's
// config_schema is config.configurable's schema, and its context_schema
// the context's; Dawn reads both the same way.
func settableKeys(p *capabilities.Prepared) map[string]any {
	r := p.Route
	tools := map[string]any{"type": "string"}
	if names := runner.ToolNames(p); len(names) > 0 {
		tools["enum"] = names
	}
	keys := map[string]any{
		"model":       map[string]any{"type": "string", "description": "the model, named as in agent.md (provider:model, such as openai:gpt-4o-mini)"},
		"temperature": map[string]any{"type": "number", "minimum": 0, "maximum": 2, "description": "sent with every model call"},
		"tools":       map[string]any{"type": "array", "items": tools, "description": "the route's tools the model may call"},
	}
	for _, name := range r.Params {
		keys[name] = map[string]any{"type": "string", "description": "route param [" + name + "] of " + r.ID}
	}
	return keys
}

// assistantGraph is GET /assistants/:id/graph: the agent loop as a graph,
// the model node calling the tools node until it answers.
func (s *dialect) assistantGraph(c echo.Context) error {
	if _, err := s.resolveAssistant(c.Request().Context(), assistantParam(c)); err != nil {
		return err
	}
	node := func(id, typ string) map[string]any {
		return map[string]any{"id": id, "type": typ, "data": map[string]any{"id": []string{"dawn", id}, "name": id}}
	}
	edge := func(from, to string, conditional bool) map[string]any {
		return map[string]any{"source": from, "target": to, "conditional": conditional}
	}
	return c.JSON(http.StatusOK, map[string]any{
		"nodes": []any{node(nodeStart, "schema"), node(nodeAgent, "runnable"), node(nodeTools, "runnable"), node("__end__", "schema")},
		"edges": []any{edge(nodeStart, nodeAgent, false), edge(nodeAgent, nodeTools, true), edge(nodeAgent, "__end__", true), edge(nodeTools, nodeAgent, false)},
	})
}

// assistantSubgraphs is GET /assistants/:id/subgraphs: the schemas of the
// route's subagents, by subagent name.
func (s *dialect) assistantSubgraphs(c echo.Context) error {
	a := s.host.App()
	found, err := s.resolveAssistant(c.Request().Context(), assistantParam(c))
	if err != nil {
		return err
	}
	out := map[string]graphSchema{}
	s.subgraphs(a, found.route.Subagents, c.Param("namespace"), "", c.QueryParam("recurse") == "true", out)
	return c.JSON(http.StatusOK, out)
}

// subgraphs adds the schemas of the subagents under namespace ns (all
// when ns is ""), named by their namespace from prefix; with recurse,
// their subagents' too ("researcher|critic").
func (s *dialect) subgraphs(a *app.App, subagents map[string]string, ns, prefix string, recurse bool, out map[string]graphSchema) {
	for name, id := range subagents {
		full := prefix + name
		if ns != "" && ns != full && !strings.HasPrefix(ns, full+"|") {
			continue
		}
		p, ok := a.Routes[id]
		if !ok {
			continue
		}
		if ns == "" || ns == full {
			out[full] = schemasOf(p)
		}
		if recurse || (ns != "" && ns != full) {
			s.subgraphs(a, p.Route.Subagents, ns, full+"|", recurse, out)
		}
	}
}
