package harness

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/plandiff"
)

// Paging of GET /threads/:id/plan/revisions.
const (
	DefaultRevisionPage = plandiff.DefaultPage
	MaxRevisionPage     = plandiff.MaxPage
)

// writeRevisions answers GET /threads/:id/plan/revisions?after=N&limit=M:
// the kept revisions numbered above after (0: from the oldest kept), at
// most limit of them (default DefaultRevisionPage, at most
// MaxRevisionPage), of the harness-owned plan or, on a route with a plain
// plan.md, of the log planning keeps (plandiff.LogField).
func writeRevisions(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost) error {
	after, err := queryInt(r, "after", 0, 0, 1<<30)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", DefaultRevisionPage, 1, MaxRevisionPage)
	if err != nil {
		return err
	}
	log, err := threadLog(r, host)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(log.Page(r.PathValue("id"), after, limit))
}

// threadLog reads the revisions of the thread's plan: the harness-owned
// plan's, or a plain plan's log.
func threadLog(r *http.Request, host capabilities.ThreadHost) (*plandiff.Log, error) {
	view, err := host.Thread(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if !owns(view.Route) {
		if view.Route == nil {
			return nil, &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "plan_not_found", Msg: errNoRevisions}
		}
		if _, ok := view.Route.Field(plandiff.LogField); !ok {
			return nil, &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "plan_not_found", Msg: errNoRevisions}
		}
		var log plandiff.Log
		if raw := view.Values[plandiff.LogField]; len(raw) > 0 {
			if err := json.Unmarshal(raw, &log); err != nil {
				return nil, fmt.Errorf("the saved plan revisions cannot be read: %w", err)
			}
		}
		return &log, nil
	}
	var plan Plan
	if err := json.Unmarshal(view.Values[PlanField], &plan); err != nil {
		return nil, fmt.Errorf("the saved plan cannot be read: %w", err)
	}
	return plan.log(), nil
}

// errNoRevisions is the message for a thread whose route has no plan.
const errNoRevisions = "this thread's route has no plan; add a plan.md beside its agent.md"

func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, &capabilities.HTTPError{Status: http.StatusBadRequest, Kind: "invalid_query", Msg: fmt.Sprintf("%s must be a whole number from %d to %d, not %q", name, lo, hi, raw)}
	}
	return n, nil
}
