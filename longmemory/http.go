package longmemory

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
)

// The memory endpoints, for people (the dawn memory command): list,
// approve, reject, edit, forget and export the memories of one route
// (its scope). Each caller reaches their own memories; the service
// credential (or anyone, without authentication) reaches the app's, or a
// user's with "user".
const (
	pathList    = "/memories"
	pathApprove = "/memories/approve"
	pathReject  = "/memories/reject"
	pathEdit    = "/memories/edit"
	pathForget  = "/memories/forget"
	pathExport  = "/memories/export"
)

// maxListed bounds the memories one list or export returns.
const maxListed = 1000

// AppRoutes serves the memory endpoints (capabilities.AppRoutes).
func (marker) AppRoutes(host capabilities.AppHost) []capabilities.AppRoute {
	e := endpoints{host}
	return []capabilities.AppRoute{
		{Method: http.MethodGet, Path: pathList, Handler: e.list},
		{Method: http.MethodGet, Path: pathExport, Handler: e.export},
		{Method: http.MethodPost, Path: pathApprove, Handler: e.approve},
		{Method: http.MethodPost, Path: pathReject, Handler: e.reject},
		{Method: http.MethodPost, Path: pathEdit, Handler: e.edit},
		{Method: http.MethodPost, Path: pathForget, Handler: e.forget},
	}
}

type endpoints struct{ host capabilities.AppHost }

// Memory is one memory as the endpoints show it.
type Memory struct {
	Key string `json:"key"`
	Record
	UpdatedAt time.Time `json:"updated_at"`
}

// action is the body of a POST to the memory endpoints.
type action struct {
	Route string `json:"route"`
	Key   string `json:"key"`
	Text  string `json:"text,omitempty"`
	User  string `json:"user,omitempty"`
}

func badRequest(format string, args ...any) error {
	return &capabilities.HTTPError{Status: http.StatusBadRequest, Kind: "invalid_input", Msg: fmt.Sprintf(format, args...)}
}

func notFound(route, key string) error {
	return &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "memory_not_found", Msg: fmt.Sprintf("route %s has no such memory %q for you; dawn memory list --route %s shows them", route, key, route)}
}

// scope checks the route and user a request names and returns the
// context to reach the memories with: the caller's own, or the named
// user's for the service credential.
func scope(ctx context.Context, route, user string) (context.Context, error) {
	if route == "" || !strings.HasPrefix(route, "/") {
		return nil, badRequest("route must name the route whose memories to reach, by its id, like route=/assistant")
	}
	if user == "" {
		return ctx, nil
	}
	id, ok := capabilities.IdentityFrom(ctx)
	if ok && !id.Service && id.User != user {
		return nil, &capabilities.HTTPError{Status: http.StatusForbidden, Kind: "forbidden", Msg: "only the service credential (DAWN_API_KEY) may reach another user's memories"}
	}
	return capabilities.WithIdentity(ctx, capabilities.Identity{User: user}), nil
}

func (e endpoints) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	ctx, err := scope(r.Context(), q.Get("route"), q.Get("user"))
	if err != nil {
		return err
	}
	status := q.Get("status")
	if status != "" && status != StatusApproved && status != StatusCandidate {
		return badRequest("status must be approved or candidate (or left out for both), not %q", status)
	}
	out, err := e.memories(ctx, q.Get("route"), status)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"route": q.Get("route"), "memories": out})
}

func (e endpoints) export(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	ctx, err := scope(r.Context(), q.Get("route"), q.Get("user"))
	if err != nil {
		return err
	}
	out, err := e.memories(ctx, q.Get("route"), "")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", `attachment; filename="memories.json"`)
	return writeJSON(w, map[string]any{"route": q.Get("route"), "exported_at": now(), "memories": out})
}

// memories lists a route's memories of status ("" for both), approved
// first, newest first, at most maxListed.
func (e endpoints) memories(ctx context.Context, route, status string) ([]Memory, error) {
	out := []Memory{}
	for _, s := range []string{StatusApproved, StatusCandidate} {
		if status != "" && status != s {
			continue
		}
		ns := Namespace(route)
		if s == StatusCandidate {
			ns = CandidateNamespace(route)
		}
		found, err := e.host.Items().Search(ctx, ns, capabilities.ItemSearch{Limit: maxListed - len(out)})
		if err != nil {
			return nil, err
		}
		for _, it := range found {
			rec := decodeRecord(it.Value)
			if s == StatusCandidate {
				rec.Status = StatusCandidate
			}
			out = append(out, Memory{Key: it.Key, Record: rec, UpdatedAt: it.UpdatedAt})
		}
	}
	return out, nil
}

// decode reads a POST's body and its scope.
func decode(r *http.Request, needText bool) (context.Context, action, error) {
	var a action
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, a, badRequest("the body must be {\"route\": \"/assistant\", \"key\": \"…\"%s}: %v", map[bool]string{true: `, "text": "…"`}[needText], err)
	}
	ctx, err := scope(r.Context(), a.Route, a.User)
	if err != nil {
		return nil, a, err
	}
	if a.Key == "" {
		return nil, a, badRequest("key must name the memory, as dawn memory list shows it")
	}
	a.Text = strings.TrimSpace(a.Text)
	if needText && (a.Text == "" || len(a.Text) > maxText) {
		return nil, a, badRequest("text must hold the memory's new text, at most %d bytes", maxText)
	}
	return ctx, a, nil
}

// approve makes a candidate a memory recall finds, merged into an
// approved one that says the same (MergeThreshold).
func (e endpoints) approve(w http.ResponseWriter, r *http.Request) error {
	ctx, a, err := decode(r, false)
	if err != nil {
		return err
	}
	st := e.host.Items()
	it, ok, err := st.Get(ctx, CandidateNamespace(a.Route), a.Key)
	if err != nil {
		return err
	}
	if !ok {
		return notFound(a.Route, a.Key)
	}
	rec := decodeRecord(it.Value)
	rec.Status, rec.ApprovedBy, rec.ApprovedAt = StatusApproved, authorOf(ctx, "http"), now()
	res, err := write(ctx, st, Namespace(a.Route), a.Key, rec.Text, rec)
	if err != nil {
		return err
	}
	if err := st.Delete(ctx, CandidateNamespace(a.Route), a.Key); err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"key": res.Key, "status": StatusApproved, "merged": res.Merged})
}

// reject deletes a candidate.
func (e endpoints) reject(w http.ResponseWriter, r *http.Request) error {
	ctx, a, err := decode(r, false)
	if err != nil {
		return err
	}
	st := e.host.Items()
	if _, ok, err := st.Get(ctx, CandidateNamespace(a.Route), a.Key); err != nil {
		return err
	} else if !ok {
		return notFound(a.Route, a.Key)
	}
	if err := st.Delete(ctx, CandidateNamespace(a.Route), a.Key); err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"key": a.Key, "status": "rejected"})
}

// edit replaces a memory's (or a candidate's) text, recording who.
func (e endpoints) edit(w http.ResponseWriter, r *http.Request) error {
	ctx, a, err := decode(r, true)
	if err != nil {
		return err
	}
	st := e.host.Items()
	for _, ns := range [][]string{Namespace(a.Route), CandidateNamespace(a.Route)} {
		it, ok, err := st.Get(ctx, ns, a.Key)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		rec := decodeRecord(it.Value)
		rec.Text, rec.EditedBy, rec.EditedAt = a.Text, authorOf(ctx, "http"), now()
		if err := st.Put(ctx, ns, a.Key, rec.encode()); err != nil {
			return err
		}
		return writeJSON(w, Memory{Key: a.Key, Record: rec, UpdatedAt: time.Now().UTC()})
	}
	return notFound(a.Route, a.Key)
}

// forget deletes a memory (or a candidate).
func (e endpoints) forget(w http.ResponseWriter, r *http.Request) error {
	ctx, a, err := decode(r, false)
	if err != nil {
		return err
	}
	st := e.host.Items()
	gone := false
	for _, ns := range [][]string{Namespace(a.Route), CandidateNamespace(a.Route)} {
		_, ok, err := st.Get(ctx, ns, a.Key)
		if err != nil {
			return err
		}
		if ok {
			gone = true
			if err := st.Delete(ctx, ns, a.Key); err != nil {
				return err
			}
		}
	}
	if !gone {
		return notFound(a.Route, a.Key)
	}
	return writeJSON(w, map[string]any{"key": a.Key, "status": "forgotten"})
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}
