package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/dawn-go/dawn/capabilities"
)

// errNoPlan is the message for a thread whose route has no harness-owned
// plan.
const errNoPlan = "this thread's route has no harness-owned plan; add enforce: true to the front matter of its plan.md"

// ThreadRoutes serves the supervisor API (capabilities.HTTPRoutes):
//
//	GET  /threads/:id/plan           the plan, budget_left and run_in_flight
//	POST /threads/:id/plan/pause     pause it (at the run's next step boundary)
//	POST /threads/:id/plan/resume    resume a paused plan
//	POST /threads/:id/plan/cancel    cancel it
//
// Each action answers with the plan as it is afterwards. A thread whose
// route has no harness-owned plan gets 404 plan_not_found, an action the
// plan's state does not allow 409 plan_state.
func (marker) ThreadRoutes(host capabilities.ThreadHost) []capabilities.ThreadRoute {
	routes := []capabilities.ThreadRoute{{Method: http.MethodGet, Path: "plan", Handler: func(w http.ResponseWriter, r *http.Request) error {
		return writePlan(w, r, host)
	}}}
	for _, action := range []string{"pause", "resume", "cancel"} {
		routes = append(routes, capabilities.ThreadRoute{Method: http.MethodPost, Path: "plan/" + action, Handler: func(w http.ResponseWriter, r *http.Request) error {
			return supervise(w, r, host, action)
		}})
	}
	return routes
}

// planBody is GET /threads/:id/plan: the harness-owned plan with what a
// supervisor needs to decide.
type planBody struct {
	ThreadID    string `json:"thread_id"`
	RunInFlight bool   `json:"run_in_flight"`
	BudgetLeft  int    `json:"budget_left"`
	*Plan
}

// threadPlan reads the thread's plan.
func threadPlan(r *http.Request, host capabilities.ThreadHost) (*Plan, bool, error) {
	p, values, running, err := host.Thread(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, false, err
	}
	if f, ok := p.Field(PlanField); !ok || f.Capability == "" || len(p.Hooks) == 0 {
		return nil, false, &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "plan_not_found", Msg: errNoPlan}
	}
	var plan Plan
	if err := json.Unmarshal(values[PlanField], &plan); err != nil {
		return nil, false, fmt.Errorf("the saved plan cannot be read: %w", err)
	}
	return &plan, running, nil
}

func writePlan(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost) error {
	plan, running, err := threadPlan(r, host)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	return json.NewEncoder(w).Encode(planBody{ThreadID: r.PathValue("id"), RunInFlight: running, BudgetLeft: plan.BudgetLeft(), Plan: plan})
}

func supervise(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost, action string) error {
	_, running, err := threadPlan(r, host)
	if err != nil {
		return err
	}
	if action == "resume" && running {
		return &capabilities.HTTPError{Status: http.StatusConflict, Kind: "plan_state", Msg: "a run is in flight on this thread, so the plan is not paused"}
	}
	err = host.Signal(r.Context(), r.PathValue("id"), action)
	if errors.Is(err, capabilities.ErrSignalRefused) {
		return &capabilities.HTTPError{Status: http.StatusConflict, Kind: "plan_state", Msg: fmt.Sprintf("the plan cannot %s in its current state", action)}
	}
	if err != nil {
		return err
	}
	return writePlan(w, r, host)
}
