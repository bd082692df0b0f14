package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/capabilities"
)

// errNoPlan is the message for a thread whose route has no harness-owned
// plan.
const errNoPlan = "this thread's route has no harness-owned plan; add enforce: true to the front matter of its plan.md"

// errRunning is the message for resuming a plan while a run is in flight.
const errRunning = "a run is in flight on this thread, so the plan is not paused"

// ThreadRoutes serves the supervisor API (capabilities.HTTPRoutes):
//
//	GET  /threads/:id/plan           the plan, budget_left and run_in_flight
//	POST /threads/:id/plan/pause     pause it (at the run's next step boundary)
//	POST /threads/:id/plan/resume    resume a paused plan
//	POST /threads/:id/plan/cancel    cancel it
//	GET  /threads/:id/plan/revisions its revisions with their diffs, paged
//
// Each action answers with the plan as it is afterwards: 200 once taken,
// 202 with pending_signal while the run in flight has not reached it (a
// pause waits 1 s for the model call in progress, a cancel 10 s). A thread whose
// route has no harness-owned plan gets 404 plan_not_found, an action the
// plan's state does not allow 409 plan_state.
func (marker) ThreadRoutes(host capabilities.ThreadHost) []capabilities.ThreadRoute {
	routes := []capabilities.ThreadRoute{{Method: http.MethodGet, Path: "plan", Handler: func(w http.ResponseWriter, r *http.Request) error {
		return writePlan(w, r, host, http.StatusOK)
	}}, {Method: http.MethodGet, Path: "plan/revisions", Handler: func(w http.ResponseWriter, r *http.Request) error {
		return writeRevisions(w, r, host)
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
	// PendingSignal is a pause or cancel the run in flight has not reached
	// yet: it takes effect at the run's next step boundary.
	PendingSignal string `json:"pending_signal,omitempty"`
	BudgetLeft    int    `json:"budget_left"`
	*Plan
}

// superviseWait is how long a supervisor action waits for the run in
// flight to act on it before answering 202 with the action pending. A
// pause waits for the model call in progress to end, which can take
// minutes; a cancel interrupts it.
var superviseWait = map[string]time.Duration{"pause": time.Second, "cancel": 10 * time.Second}

// threadPlan reads the thread's plan.
func threadPlan(r *http.Request, host capabilities.ThreadHost) (*Plan, capabilities.ThreadView, error) {
	view, err := host.Thread(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, view, err
	}
	if !owns(view.Route) {
		return nil, view, &capabilities.HTTPError{Status: http.StatusNotFound, Kind: "plan_not_found", Msg: errNoPlan}
	}
	var plan Plan
	if err := json.Unmarshal(view.Values[PlanField], &plan); err != nil {
		return nil, view, fmt.Errorf("the saved plan cannot be read: %w", err)
	}
	return &plan, view, nil
}

// owns reports whether p's plan is harness-owned: a capability's plan field
// and the hooks that enforce it.
func owns(p *capabilities.Prepared) bool {
	if p == nil {
		return false
	}
	f, ok := p.Field(PlanField)
	return ok && f.Capability != "" && len(p.Hooks) > 0
}

func writePlan(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost, status int) error {
	plan, view, err := threadPlan(r, host)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(planBody{ThreadID: r.PathValue("id"), RunInFlight: view.Running, PendingSignal: view.PendingSignal, BudgetLeft: plan.BudgetLeft(), Plan: plan})
}

// supervise takes a supervisor action and answers with the plan as it is
// afterwards: 200 once the action is taken, 202 (with pending_signal) while
// the run in flight has not reached it.
func supervise(w http.ResponseWriter, r *http.Request, host capabilities.ThreadHost, action string) error {
	if _, view, err := threadPlan(r, host); err != nil {
		return err
	} else if action == "resume" && view.Running {
		return &capabilities.HTTPError{Status: http.StatusConflict, Kind: "plan_state", Msg: errRunning}
	} else if id := stepInterruptOf(view.Values); action == "resume" && id != "" {
		return &capabilities.HTTPError{Status: http.StatusConflict, Kind: "plan_state", Msg: fmt.Sprintf(
			"the plan waits for a person's step decision: answer interrupt %s with POST /threads/%s/resume (continue, skip, revise or cancel)", id, r.PathValue("id"))}
	}
	pending, err := host.Signal(r.Context(), r.PathValue("id"), action, superviseWait[action])
	switch {
	case errors.Is(err, capabilities.ErrSignalRefused):
		return &capabilities.HTTPError{Status: http.StatusConflict, Kind: "plan_state", Msg: fmt.Sprintf("the plan cannot %s in its current state", action)}
	case errors.Is(err, capabilities.ErrRunInFlight):
		return &capabilities.HTTPError{Status: http.StatusConflict, Kind: "plan_state", Msg: errRunning}
	case errors.Is(err, capabilities.ErrRunCancelling):
		return &capabilities.HTTPError{Status: http.StatusConflict, Kind: "plan_state", Msg: "the run is being cancelled, and its plan with it"}
	case err != nil:
		return err
	}
	if pending {
		return writePlan(w, r, host, http.StatusAccepted)
	}
	return writePlan(w, r, host, http.StatusOK)
}

// stepInterruptOf returns the id of the step interrupt the thread's run is
// parked on, or "".
func stepInterruptOf(values map[string]json.RawMessage) string {
	pending, _ := capabilities.PendingInterrupts(values)
	for _, in := range pending {
		if in.Kind == StepKind && len(in.Path) == 0 {
			return in.ID
		}
	}
	return ""
}
