package langgraph

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/router"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// In the LangGraph dialect every route of the app is an assistant whose
// graph is the route: graph_id is the route id and assistant_id a UUID
// derived from it the way the LangGraph server derives a graph's default
// assistant, so it is stable across restarts and replicas.

// graphSpace is the namespace of the LangGraph server's default assistant
// ids (uuid5(NAMESPACE_GRAPH, graph_id)).
var graphSpace = uuid.MustParse("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

// assistantID is the assistant id of the route with id routeID.
func assistantID(routeID string) string {
	return uuid.NewSHA1(graphSpace, []byte(routeID)).String()
}

// assistant is the LangGraph Assistant object of one route.
type assistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

func newAssistant(a *app.App, r *router.Route) assistant {
	meta := map[string]any{"created_by": "system", "route_id": r.ID, "kind": r.Kind, "params": orEmpty(r.Params)}
	if r.Parent != "" {
		meta["parent"] = r.Parent
	}
	if p, ok := a.Routes[r.ID]; ok {
		var caps []string
		for _, c := range p.Capabilities {
			caps = append(caps, c.Name)
		}
		meta["capabilities"] = orEmpty(caps)
	} else {
		meta["error"] = "route failed to prepare; run `dawn check`"
	}
	return assistant{
		AssistantID: assistantID(r.ID), GraphID: r.ID, Name: r.ID, Description: r.Agent.Description,
		Config: map[string]any{"configurable": map[string]any{}}, Context: map[string]any{}, Metadata: meta,
		Version: 1, CreatedAt: a.LoadedAt, UpdatedAt: a.LoadedAt,
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// findAssistant names the route an assistant id means: a UUID from
// assistantID, a route id (with or without Dawn's "#agent" suffix or the
// leading "/"), or a concrete path such as /support/acme, whose params the
// run then gets. path is what to hand the runner.
func findAssistant(a *app.App, id string) (r *router.Route, path string, err error) {
	if id == "" {
		return nil, "", wire.BadBody(`assistant_id is required: a route id such as "/support/[tenant]", a path such as "/support/acme", or an assistant_id from POST /assistants/search`)
	}
	if _, perr := uuid.Parse(id); perr == nil && a.Tree != nil {
		for _, r := range a.Tree.Routes {
			if assistantID(r.ID) == id {
				return r, r.ID, nil
			}
		}
	}
	path = id
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if a.Tree == nil {
		return nil, "", assistantNotFound(id)
	}
	r, _, err = a.Tree.Match(path)
	if err != nil {
		return nil, "", assistantNotFound(id)
	}
	return r, path, nil
}

func assistantNotFound(id string) *wire.Error {
	return wire.NewError(http.StatusNotFound, "assistant_not_found", "no assistant "+strconv.Quote(id)+": an assistant is a route; name a route id such as /support/[tenant], a path such as /support/acme, or an assistant_id from POST /assistants/search")
}

// assistantParam reads the :assistant path parameter, which a client may
// have percent-encoded (a route id holds "/", "[" and "#").
func assistantParam(c echo.Context) string {
	id := c.Param("assistant")
	if s, err := url.PathUnescape(id); err == nil {
		return s
	}
	return id
}

func (s *dialect) getAssistant(c echo.Context) error {
	a := s.host.App()
	r, _, err := findAssistant(a, assistantParam(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newAssistant(a, r))
}

// assistantSearch is the body of POST /assistants/search and /count.
type assistantSearch struct {
	GraphID   string         `json:"graph_id"`
	Name      string         `json:"name"`
	Metadata  map[string]any `json:"metadata"`
	Limit     int            `json:"limit"`
	Offset    int            `json:"offset"`
	SortBy    string         `json:"sort_by"`
	SortOrder string         `json:"sort_order"`
}

func (q assistantSearch) match(as assistant) bool {
	if q.GraphID != "" && as.GraphID != q.GraphID {
		return false
	}
	if q.Name != "" && !strings.Contains(strings.ToLower(as.Name), strings.ToLower(q.Name)) {
		return false
	}
	for k, want := range q.Metadata {
		got, ok := as.Metadata[k]
		if !ok || string(wire.MustJSON(got)) != string(wire.MustJSON(want)) {
			return false
		}
	}
	return true
}

func (s *dialect) matchAssistants(c echo.Context) ([]assistant, assistantSearch, error) {
	var q assistantSearch
	if err := wire.Decode(c, &q); err != nil {
		return nil, q, err
	}
	a := s.host.App()
	out := []assistant{}
	if a.Tree != nil {
		for _, r := range a.Tree.Routes {
			if as := newAssistant(a, r); q.match(as) {
				out = append(out, as)
			}
		}
	}
	key := map[string]func(assistant) string{
		"": func(as assistant) string { return as.GraphID }, "graph_id": func(as assistant) string { return as.GraphID },
		"name": func(as assistant) string { return as.Name }, "assistant_id": func(as assistant) string { return as.AssistantID },
		// Every assistant was loaded with the app: the times are equal.
		"created_at": func(as assistant) string { return as.GraphID }, "updated_at": func(as assistant) string { return as.GraphID },
	}[q.SortBy]
	if key == nil {
		return nil, q, wire.BadBody("sort_by must be one of assistant_id, graph_id, name, created_at, updated_at, not " + strconv.Quote(q.SortBy))
	}
	slices.SortFunc(out, func(x, y assistant) int { return strings.Compare(key(x), key(y)) })
	switch q.SortOrder {
	case "", "asc":
	case "desc":
		slices.Reverse(out)
	default:
		return nil, q, wire.BadBody("sort_order must be asc or desc, not " + strconv.Quote(q.SortOrder))
	}
	return out, q, nil
}

func (s *dialect) searchAssistants(c echo.Context) error {
	all, q, err := s.matchAssistants(c)
	if err != nil {
		return err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	start := min(max(q.Offset, 0), len(all))
	end := min(start+limit, len(all))
	if end < len(all) {
		c.Response().Header().Set("X-Pagination-Next", strconv.Itoa(end))
	}
	return c.JSON(http.StatusOK, all[start:end])
}

func (s *dialect) countAssistants(c echo.Context) error {
	all, _, err := s.matchAssistants(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, len(all))
}

// createAssistant answers POST /assistants for a graph_id that is a route:
// the route's assistant. Assistants are the app's routes, so nothing is
// created; a client that creates "an assistant for graph X" gets X's.
func (s *dialect) createAssistant(c echo.Context) error {
	var body struct {
		GraphID     string `json:"graph_id"`
		AssistantID string `json:"assistant_id"`
	}
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	a := s.host.App()
	r, _, err := findAssistant(a, body.GraphID)
	if err != nil {
		return err
	}
	if body.AssistantID != "" && body.AssistantID != assistantID(r.ID) {
		return wire.NewError(http.StatusConflict, "assistant_read_only", "assistants are the app's routes and keep their own ids; the assistant of graph "+r.ID+" is "+assistantID(r.ID))
	}
	return c.JSON(http.StatusOK, newAssistant(a, r))
}

// readOnlyAssistant answers the calls that would change an assistant.
func (s *dialect) readOnlyAssistant(c echo.Context) error {
	return wire.NewError(http.StatusMethodNotAllowed, "assistant_read_only", "assistants are the app's routes: change the route's files (agent.md, plan.md, state.yaml) instead")
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
	r, _, err := findAssistant(a, assistantParam(c))
	if err != nil {
		return err
	}
	p, ok := a.Routes[r.ID]
	if !ok {
		return &app.BrokenRouteError{Route: r.ID}
	}
	return c.JSON(http.StatusOK, schemasOf(p))
}

// schemasOf derives a route's schemas from its state fields and params:
// the state is messages plus every field, the input messages plus the
// fields a run may set (those no capability owns), and the params go in
// config.configurable or context.
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
	state := map[string]any{"messages": map[string]any{"type": "array", "items": message}}
	input := map[string]any{"messages": map[string]any{"type": "array", "items": message}}
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
	params := map[string]any{}
	for _, name := range r.Params {
		params[name] = map[string]any{"type": "string", "description": "route param [" + name + "] of " + r.ID}
	}
	object := func(title string, props map[string]any) map[string]any {
		return map[string]any{"title": title, "type": "object", "properties": props}
	}
	return graphSchema{
		GraphID:       r.ID,
		InputSchema:   object("Input of "+r.ID, input),
		OutputSchema:  object("State of "+r.ID, state),
		StateSchema:   object("State of "+r.ID, state),
		ConfigSchema:  object("Config of "+r.ID, map[string]any{"configurable": object("Params of "+r.ID, params)}),
		ContextSchema: object("Params of "+r.ID, params),
	}
}

// assistantGraph is GET /assistants/:id/graph: the agent loop as a graph,
// the model node calling the tools node until it answers.
func (s *dialect) assistantGraph(c echo.Context) error {
	if _, _, err := findAssistant(s.host.App(), assistantParam(c)); err != nil {
		return err
	}
	node := func(id, typ string) map[string]any {
		return map[string]any{"id": id, "type": typ, "data": map[string]any{"id": []string{"dawn", id}, "name": id}}
	}
	edge := func(from, to string, conditional bool) map[string]any {
		return map[string]any{"source": from, "target": to, "conditional": conditional}
	}
	return c.JSON(http.StatusOK, map[string]any{
		"nodes": []any{node("__start__", "schema"), node(nodeAgent, "runnable"), node(nodeTools, "runnable"), node("__end__", "schema")},
		"edges": []any{edge("__start__", nodeAgent, false), edge(nodeAgent, nodeTools, true), edge(nodeAgent, "__end__", true), edge(nodeTools, nodeAgent, false)},
	})
}

// assistantSubgraphs is GET /assistants/:id/subgraphs: the schemas of the
// route's subagents, by subagent name.
func (s *dialect) assistantSubgraphs(c echo.Context) error {
	a := s.host.App()
	r, _, err := findAssistant(a, assistantParam(c))
	if err != nil {
		return err
	}
	out := map[string]graphSchema{}
	for name, id := range r.Subagents {
		if p, ok := a.Routes[id]; ok {
			out[name] = schemasOf(p)
		}
	}
	return c.JSON(http.StatusOK, out)
}
