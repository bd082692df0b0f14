package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/router"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// In the LangGraph dialect a graph is a route: graph_id is the route's
// graph name (the route id without its leading "/": "agent" for /agent,
// "support/[tenant]" for /support/[tenant]), as LangGraph names graphs;
// a request may name a graph either way. Every route has a default
// assistant, the route as its files say, whose assistant_id is a UUID
// derived from the route id the way the LangGraph server derives a
// graph's default assistant, so it is stable across restarts and
// replicas. Clients may create more assistants of a route
// (configured variants: a model, a temperature, prompt variables, a
// narrower tool list, a turn limit; see overrides.go), which the store
// keeps with their versions.

// graphSpace is the namespace of the LangGraph server's default assistant
// ids (uuid5(NAMESPACE_GRAPH, graph_id)).
var graphSpace = uuid.MustParse("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

// assistantID is the assistant id of the default assistant of the route
// with id routeID.
func assistantID(routeID string) string {
	return uuid.NewSHA1(graphSpace, []byte(routeID)).String()
}

// assistant is the LangGraph Assistant object.
type assistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// graphName is a route id as a LangGraph graph is named: without the
// leading "/" ("agent" for /agent); the app's root route stays "/".
func graphName(routeID string) string {
	if name := strings.TrimPrefix(routeID, "/"); name != "" {
		return name
	}
	return routeID
}

// newAssistant is the default assistant of route r: its config and
// context are what LANGGRAPH_CONFIG gives its graph, if anything.
func (s *dialect) newAssistant(a *app.App, r *router.Route) assistant {
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
	var desc *string
	if r.Agent.Description != "" {
		desc = &r.Agent.Description
	}
	config, values := map[string]any{"configurable": map[string]any{}}, map[string]any{}
	if d, ok := s.defaults[graphName(r.ID)]; ok {
		config, values = maps.Clone(d.config), d.context
		if _, ok := config["configurable"]; !ok {
			config["configurable"] = map[string]any{}
		}
	}
	return assistant{
		AssistantID: assistantID(r.ID), GraphID: graphName(r.ID), Name: graphName(r.ID), Description: desc,
		Config: config, Context: values, Metadata: meta,
		Version: 1, CreatedAt: a.LoadedAt, UpdatedAt: a.LoadedAt,
	}
}

// storedAssistant is an assistant the store keeps as LangGraph shows it.
// The store keeps the route id; graph_id shows the graph name.
func storedAssistant(x store.Assistant) assistant {
	out := assistant{AssistantID: x.ID, GraphID: graphName(x.GraphID), Name: x.Name, Version: x.Version, CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt}
	if x.Description != "" {
		out.Description = &x.Description
	}
	for _, f := range []struct {
		raw json.RawMessage
		to  *map[string]any
	}{{x.Config, &out.Config}, {x.Context, &out.Context}, {x.Metadata, &out.Metadata}} {
		_ = json.Unmarshal(f.raw, f.to)
		if *f.to == nil {
			*f.to = map[string]any{}
		}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// findAssistant names the route an id of a default assistant means: a
// UUID from assistantID, a route id (with or without Dawn's "#agent"
// suffix or the leading "/"), or a concrete path such as /support/acme,
// whose params the run then gets. path is what to hand the runner.
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

// lgAssistant is an assistant found by its id: a route's default
// assistant, or one the store keeps, with the route it runs.
type lgAssistant struct {
	assistant
	route *router.Route
	// path is what to hand the runner: the route id, or the concrete path
	// a default assistant was named by.
	path   string
	stored bool
}

// resolveAssistant finds the assistant id names: a default assistant
// (see findAssistant) or a stored one. A UUID that is no default
// assistant's is looked up in the store before it is taken as a path, so
// that a route with a dynamic segment at the root does not hide the
// stored assistants.
func (s *dialect) resolveAssistant(ctx context.Context, id string) (lgAssistant, error) {
	a := s.host.App()
	if _, perr := uuid.Parse(id); perr == nil && !isDefaultAssistant(a, id) {
		x, err := s.host.GetAssistant(ctx, id)
		switch {
		case err == nil:
			r, _, ferr := findAssistant(a, x.GraphID)
			if ferr != nil {
				return lgAssistant{}, wire.NewError(http.StatusNotFound, "graph_not_found", "assistant "+id+" runs graph "+x.GraphID+", which is no route of the app now: restore the route, or delete the assistant")
			}
			return lgAssistant{assistant: storedAssistant(x), route: r, path: r.ID, stored: true}, nil
		case !errors.Is(err, store.ErrNotFound):
			return lgAssistant{}, err
		}
	}
	r, path, err := findAssistant(a, id)
	if err != nil {
		return lgAssistant{}, err
	}
	return lgAssistant{assistant: s.newAssistant(a, r), route: r, path: path}, nil
}

// isDefaultAssistant reports whether id is a route's default assistant.
func isDefaultAssistant(a *app.App, id string) bool {
	if a.Tree == nil {
		return false
	}
	for _, r := range a.Tree.Routes {
		if assistantID(r.ID) == id {
			return true
		}
	}
	return false
}

// assistantNotFound is LangGraph's answer for an assistant id that names
// no assistant, with where to find one.
func assistantNotFound(id string) *wire.Error {
	return wire.NewError(http.StatusNotFound, "assistant_not_found", "Assistant not found: no assistant "+strconv.Quote(id)+"; name a route id such as /support/[tenant], a path such as /support/acme, or an assistant_id from POST /assistants/search")
}

// runAssistantNotFound is LangGraph's answer for a run request whose
// assistant_id names no assistant.
func runAssistantNotFound(id string) *wire.Error {
	return wire.NewError(http.StatusNotFound, "assistant_not_found", "No assistant found for "+strconv.Quote(id)+". Make sure the assistant ID is for a valid assistant or a valid graph ID (a route id such as /support/[tenant], or a path such as /support/acme).")
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
	found, err := s.resolveAssistant(c.Request().Context(), assistantParam(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, found.assistant)
}

// assistantSearch is the body of POST /assistants/search and /count.
type assistantSearch struct {
	GraphID   string          `json:"graph_id"`
	Name      string          `json:"name"`
	Metadata  json.RawMessage `json:"metadata"`
	Limit     int             `json:"limit"`
	Offset    int             `json:"offset"`
	SortBy    string          `json:"sort_by"`
	SortOrder string          `json:"sort_order"`
	Select    []string        `json:"select"`
}

// assistantSorts are the keys a search sorts by. The default assistants
// were all loaded with the app: their times are equal, and they keep
// their order by graph.
var assistantSorts = map[string]func(assistant) string{
	"":             func(as assistant) string { return as.GraphID },
	"graph_id":     func(as assistant) string { return as.GraphID },
	"name":         func(as assistant) string { return as.Name },
	"assistant_id": func(as assistant) string { return as.AssistantID },
	"created_at":   func(as assistant) string { return as.CreatedAt.Format(time.RFC3339Nano) + as.GraphID },
	"updated_at":   func(as assistant) string { return as.UpdatedAt.Format(time.RFC3339Nano) + as.GraphID },
}

// match reports whether default assistant as is one q selects; graphID
// is a route id.
func (q assistantSearch) match(as assistant, graphID string) bool {
	if graphID != "" && as.GraphID != graphName(graphID) {
		return false
	}
	if q.Name != "" && !strings.Contains(strings.ToLower(as.Name), strings.ToLower(q.Name)) {
		return false
	}
	var want map[string]any
	_ = json.Unmarshal(q.Metadata, &want)
	for k, v := range want {
		got, ok := as.Metadata[k]
		if !ok || string(wire.MustJSON(got)) != string(wire.MustJSON(v)) {
			return false
		}
	}
	return true
}

// graphOf reads a search's graph_id: a route id, or a route's graph name
// ("agent" for /agent); "" when none is asked. ok is false for a graph
// no route has, which selects no assistant.
func (s *dialect) graphOf(graphID string) (id string, ok bool) {
	if graphID == "" {
		return "", true
	}
	r, _, err := findAssistant(s.host.App(), graphID)
	if err != nil {
		return graphID, false
	}
	return r.ID, true
}

// matchAssistants returns the assistants a search selects, default and
// stored, sorted, and its first index past the page asked for.
func (s *dialect) matchAssistants(c echo.Context, q assistantSearch) ([]assistant, error) {
	key := assistantSorts[q.SortBy]
	if key == nil || q.SortBy == "version" {
		return nil, wire.BadBody("sort_by must be one of assistant_id, graph_id, name, created_at, updated_at, not " + strconv.Quote(q.SortBy))
	}
	if q.SortOrder != "" && q.SortOrder != "asc" && q.SortOrder != "desc" {
		return nil, wire.BadBody("sort_order must be asc or desc, not " + strconv.Quote(q.SortOrder))
	}
	graph, known := s.graphOf(q.GraphID)
	out := []assistant{}
	if !known {
		return out, nil
	}
	a := s.host.App()
	if a.Tree != nil {
		for _, r := range a.Tree.Routes {
			if as := s.newAssistant(a, r); q.match(as, graph) {
				out = append(out, as)
			}
		}
	}
	// The stored assistants that could be on the page (the store gives
	// at most 1000 at once): the page is cut after the default ones join
	// them.
	stored, err := s.host.SearchAssistants(c.Request().Context(), store.AssistantQuery{
		GraphID: graph, Name: q.Name, Metadata: q.Metadata, Limit: max(q.Offset, 0) + max(q.Limit, 10),
		SortBy: cmpOr(q.SortBy, "graph_id"), SortOrder: cmpOr(q.SortOrder, "asc"),
	})
	if err != nil {
		return nil, err
	}
	for _, x := range stored {
		out = append(out, storedAssistant(x))
	}
	slices.SortStableFunc(out, func(x, y assistant) int { return strings.Compare(key(x), key(y)) })
	if q.SortOrder == "desc" {
		slices.Reverse(out)
	}
	return out, nil
}

func (s *dialect) searchAssistants(c echo.Context) error {
	var q assistantSearch
	if err := wire.Decode(c, &q); err != nil {
		return err
	}
	all, err := s.matchAssistants(c, q)
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
	c.Response().Header().Set("X-Pagination-Total", strconv.Itoa(len(all)))
	out := make([]any, 0, end-start)
	for _, as := range all[start:end] {
		v, err := selectFields(as, q.Select)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	return c.JSON(http.StatusOK, out)
}

// countAssistants is POST /assistants/count: the default assistants the
// query selects, and the stored ones the store counts.
func (s *dialect) countAssistants(c echo.Context) error {
	var q assistantSearch
	if err := wire.Decode(c, &q); err != nil {
		return err
	}
	graph, known := s.graphOf(q.GraphID)
	if !known {
		return c.JSON(http.StatusOK, 0)
	}
	n := 0
	if a := s.host.App(); a.Tree != nil {
		for _, r := range a.Tree.Routes {
			if q.match(s.newAssistant(a, r), graph) {
				n++
			}
		}
	}
	stored, err := s.host.CountAssistants(c.Request().Context(), store.AssistantQuery{GraphID: graph, Name: q.Name, Metadata: q.Metadata})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, n+stored)
}

// assistantBody is the body of POST /assistants and PATCH
// /assistants/:id.
type assistantBody struct {
	GraphID     string          `json:"graph_id"`
	AssistantID string          `json:"assistant_id"`
	IfExists    string          `json:"if_exists"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Config      json.RawMessage `json:"config"`
	Context     json.RawMessage `json:"context"`
	Metadata    json.RawMessage `json:"metadata"`
}

// createAssistant is POST /assistants: a new assistant of the route
// graph_id names, with the overrides its config and context carry,
// checked against the route.
func (s *dialect) createAssistant(c echo.Context) error {
	ctx := c.Request().Context()
	var body assistantBody
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	if err := oneOf("if_exists", body.IfExists, "raise", "do_nothing"); err != nil {
		return err
	}
	if body.GraphID == "" {
		return wire.BadBody(`graph_id is required: the route the assistant runs, such as "agent" or "/support/[tenant]"`)
	}
	r, _, err := findAssistant(s.host.App(), body.GraphID)
	if err != nil {
		return wire.NewError(http.StatusNotFound, "graph_not_found", "graph_id "+strconv.Quote(body.GraphID)+" is no route of the app: name a route id such as /support/[tenant] (GET /routes lists them)")
	}
	if body.AssistantID != "" {
		if existing, err := s.resolveAssistant(ctx, body.AssistantID); err == nil {
			if body.IfExists == "do_nothing" {
				return c.JSON(http.StatusOK, existing.assistant)
			}
			return wire.NewError(http.StatusConflict, "assistant_exists", "Assistant already exists: "+body.AssistantID)
		}
		if err := wire.CheckThreadID(body.AssistantID); err != nil {
			return wire.BadBody("assistant_id: " + err.Error())
		}
	}
	x := store.Assistant{ID: cmpOr(body.AssistantID, uuid.NewString()), GraphID: r.ID, Name: "Untitled",
		Config: body.Config, Context: body.Context, Metadata: body.Metadata}
	if body.Name != nil && *body.Name != "" {
		x.Name = *body.Name
	}
	if body.Description != nil {
		x.Description = *body.Description
	}
	if err := s.checkAssistantConfig(r, x.Config, x.Context); err != nil {
		return err
	}
	created, err := s.host.CreateAssistant(ctx, x)
	if errors.Is(err, store.ErrExists) {
		return wire.NewError(http.StatusConflict, "assistant_exists", "Assistant already exists: "+x.ID)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, storedAssistant(created))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// storedOnly finds the stored assistant of the :assistant path parameter
// for a call that changes it: a default assistant is the route's files.
func (s *dialect) storedOnly(c echo.Context) (lgAssistant, error) {
	found, err := s.resolveAssistant(c.Request().Context(), assistantParam(c))
	if err != nil {
		return found, err
	}
	if !found.stored {
		return found, wire.NewError(http.StatusMethodNotAllowed, "assistant_read_only", "assistant "+found.AssistantID+" is the default assistant of route "+found.route.ID+": change the route's files (agent.md, plan.md, state.yaml) instead, or create an assistant of the route with POST /assistants")
	}
	return found, nil
}

// updateAssistant is PATCH /assistants/:id: a new version, with the
// fields the body sets (metadata merged into the current one).
func (s *dialect) updateAssistant(c echo.Context) error {
	found, err := s.storedOnly(c)
	if err != nil {
		return err
	}
	var body assistantBody
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	r := found.route
	if body.GraphID != "" {
		if r, _, err = findAssistant(s.host.App(), body.GraphID); err != nil || r.ID != found.route.ID {
			return wire.BadBody("graph_id cannot change: assistant " + found.AssistantID + " runs route " + found.route.ID + "; create an assistant of the other route instead")
		}
	}
	config, context := cmpRaw(body.Config, wire.MustJSON(found.Config)), cmpRaw(body.Context, wire.MustJSON(found.Context))
	if err := s.checkAssistantConfig(r, config, context); err != nil {
		return err
	}
	var patch map[string]json.RawMessage
	if !isNull(body.Metadata) {
		if err := json.Unmarshal(body.Metadata, &patch); err != nil || patch == nil {
			return wire.BadBody("metadata must be a JSON object")
		}
	}
	updated, err := s.host.UpdateAssistant(c.Request().Context(), found.AssistantID, func(x *store.Assistant) error {
		x.Config, x.Context = config, context
		if body.Name != nil {
			x.Name = *body.Name
		}
		if body.Description != nil {
			x.Description = *body.Description
		}
		if patch != nil {
			meta := map[string]json.RawMessage{}
			_ = json.Unmarshal(x.Metadata, &meta)
			for k, v := range patch {
				meta[k] = v
			}
			x.Metadata = wire.MustJSON(meta)
		}
		return nil
	})
	if err != nil {
		return assistantStoreError(found.AssistantID, err)
	}
	return c.JSON(http.StatusOK, storedAssistant(updated))
}

func cmpRaw(a, b json.RawMessage) json.RawMessage {
	if isNull(a) {
		return b
	}
	return a
}

// assistantStoreError is a store error about assistant id as LangGraph
// answers it.
func assistantStoreError(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return assistantNotFound(id)
	}
	return err
}

// deleteAssistant is DELETE /assistants/:id[?delete_threads=true]: the
// assistant with its versions, and with delete_threads the threads whose
// metadata names it as their assistant_id.
func (s *dialect) deleteAssistant(c echo.Context) error {
	ctx := c.Request().Context()
	found, err := s.storedOnly(c)
	if err != nil {
		return err
	}
	if err := s.host.DeleteAssistant(ctx, found.AssistantID); err != nil {
		return assistantStoreError(found.AssistantID, err)
	}
	if q := c.QueryParam("delete_threads"); q == "true" || q == "1" {
		filter := wire.MustJSON(map[string]string{"assistant_id": found.AssistantID})
		for {
			threads, err := s.host.SearchThreads(ctx, store.ThreadQuery{Metadata: filter, Limit: 100})
			if err != nil {
				return err
			}
			if len(threads) == 0 {
				break
			}
			for _, t := range threads {
				if err := s.host.DeleteThread(ctx, t.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
		}
	}
	return c.JSON(http.StatusOK, []string{found.AssistantID})
}

// assistantVersions is POST /assistants/:id/versions: its versions,
// newest first.
func (s *dialect) assistantVersions(c echo.Context) error {
	found, err := s.resolveAssistant(c.Request().Context(), assistantParam(c))
	if err != nil {
		return err
	}
	var q struct {
		Metadata json.RawMessage `json:"metadata"`
		Limit    int             `json:"limit"`
		Offset   int             `json:"offset"`
	}
	if err := wire.Decode(c, &q); err != nil {
		return err
	}
	if !found.stored {
		// The route's default assistant has the one version its files are.
		page := []assistant{}
		if q.Offset <= 0 && (assistantSearch{Metadata: q.Metadata}).match(found.assistant, "") {
			page = append(page, found.assistant)
		}
		return c.JSON(http.StatusOK, page)
	}
	versions, err := s.host.AssistantVersions(c.Request().Context(), found.AssistantID, store.AssistantQuery{Metadata: q.Metadata, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	out := make([]assistant, len(versions))
	for i, v := range versions {
		out[i] = storedAssistant(v)
	}
	return c.JSON(http.StatusOK, out)
}

// setLatestAssistant is POST /assistants/:id/latest {"version": n}.
func (s *dialect) setLatestAssistant(c echo.Context) error {
	found, err := s.storedOnly(c)
	if err != nil {
		return err
	}
	var body struct {
		Version int `json:"version"`
	}
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	x, err := s.host.SetLatestAssistant(c.Request().Context(), found.AssistantID, body.Version)
	if errors.Is(err, store.ErrNotFound) {
		return wire.NewError(http.StatusNotFound, "assistant_version_not_found", "Assistant version not found: assistant "+found.AssistantID+" has no version "+strconv.Itoa(body.Version)+"; POST /assistants/"+found.AssistantID+"/versions lists them")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, storedAssistant(x))
}
