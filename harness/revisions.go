package harness

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/capabilities"
)

// Paging of GET /threads/:id/plan/revisions.
const (
	DefaultRevisionPage = 20
	MaxRevisionPage     = MaxRevisions
)

// revisionsBody is GET /threads/:id/plan/revisions: a page of the plan's
// revisions, oldest first, each with its diff, and every item the plan
// dropped.
type revisionsBody struct {
	ThreadID  string     `json:"thread_id"`
	Revisions []Revision `json:"revisions"`
	// Total is the number of revisions the plan has had; Trimmed of
	// them, the oldest, are no longer kept (see MaxRevisions).
	Total   int `json:"total"`
	Trimmed int `json:"trimmed"`
	// NextAfter, when set, is the after= of the next page.
	NextAfter int       `json:"next_after,omitempty"`
	Dropped   []Removed `json:"dropped"`
}

// writeRevisions answers GET /threads/:id/plan/revisions?after=N&limit=M:
// the kept revisions numbered above after (0: from the oldest kept), at
// most limit of them (default DefaultRevisionPage, at most
// MaxRevisionPage).
func writeRevisions(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost) error {
	after, err := queryInt(r, "after", 0, 0, 1<<30)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", DefaultRevisionPage, 1, MaxRevisionPage)
	if err != nil {
		return err
	}
	plan, _, err := threadPlan(r, host)
	if err != nil {
		return err
	}
	body := revisionsBody{ThreadID: r.PathValue("id"), Revisions: []Revision{}, Total: plan.RevisionN, Trimmed: plan.Trimmed, Dropped: plan.Dropped}
	if body.Dropped == nil {
		body.Dropped = []Removed{}
	}
	for _, rev := range plan.Revisions {
		if rev.N <= after {
			continue
		}
		if len(body.Revisions) == limit {
			body.NextAfter = body.Revisions[limit-1].N
			break
		}
		body.Revisions = append(body.Revisions, rev)
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(body)
}

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
