package langgraph

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// This file serves the runs of a thread: runs/wait, POST /threads/:id/runs,
// reading and listing runs in LangGraph's run object.

// lgRunWait is POST /threads/:id/runs/wait in the LangGraph dialect: the
// run's final state values, or {"__error__": ...} for a failed run, which
// the SDK raises.
func (s *dialect) lgRunWait(c echo.Context) error {
	run, req, body, err := s.parseLGRun(c, c.Param("id"))
	if err != nil {
		return err
	}
	req.Stream = false
	started, queued, err := s.startLG(c.Request().Context(), run, req, body)
	if err != nil {
		return err
	}
	if started == nil {
		setRunHeaders(c, queued.ThreadID, queued.ID)
		return s.joinResult(c, queued)
	}
	return s.waitLG(c, run.ThreadID, started)
}

func (s *dialect) waitLG(c echo.Context, threadID string, run *runner.Run) error {
	setRunHeaders(c, threadID, run.ID)
	select {
	case <-run.Done():
	case <-c.Request().Context().Done():
		return nil // the client left; the run goes on
	}
	return s.answerResult(c, threadID, run.Output())
}

// answerResult answers with a finished run's output as runs/wait and join
// give it: the state values, {"__error__": ...} for a failed run (the SDK
// raises it), and the thread's state for a cancelled one.
func (s *dialect) answerResult(c echo.Context, threadID string, output json.RawMessage) error {
	var ended struct {
		Error     string `json:"error"`
		ErrorName string `json:"error_name"`
		Cancelled bool   `json:"cancelled"`
	}
	if _, _, ok := splitValues(output); !ok && json.Unmarshal(output, &ended) == nil {
		switch {
		case ended.Error != "":
			output = wire.MustJSON(map[string]any{"__error__": map[string]string{"error": errorNameOr(ended.ErrorName), "message": ended.Error}})
			return c.JSONBlob(http.StatusOK, output)
		case ended.Cancelled:
			cp, err := s.host.Latest(c.Request().Context(), threadID)
			if err != nil {
				return err
			}
			return c.JSONBlob(http.StatusOK, lcCheckpointValues(cp))
		}
	}
	return c.JSONBlob(http.StatusOK, withInterrupts(stateOutput(s.outputNames(c.Request().Context(), threadID), output)))
}

// lgRunObject is the LangGraph Run object, with Dawn's route and error
// beside it.
type lgRunObject struct {
	RunID             string          `json:"run_id"`
	ThreadID          string          `json:"thread_id"`
	AssistantID       string          `json:"assistant_id"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	Status            string          `json:"status"`
	Metadata          json.RawMessage `json:"metadata"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	Kwargs            map[string]any  `json:"kwargs"`
	Route             string          `json:"route"`
	Error             string          `json:"error,omitempty"`
}

// runAttrs is what a LangGraph run keeps with it in the store
// (store.Run.Attrs), for its Run object on any server.
type runAttrs struct {
	AssistantID string         `json:"assistant_id"`
	Multitask   string         `json:"multitask_strategy"`
	Kwargs      map[string]any `json:"kwargs"`
}

// lgStatuses maps the store's run statuses to LangGraph's.
var lgStatuses = map[string]string{
	store.RunPending:     "pending",
	store.RunRunning:     "running",
	store.RunSuccess:     "success",
	store.RunError:       "error",
	store.RunCancelled:   "interrupted",
	store.RunInterrupted: "error",
}

// lgStatus is a run's LangGraph status. A run that parked for a person
// ended as a LangGraph run that reached an interrupt() does: with
// success (its thread is "interrupted").
func lgStatus(r store.Run) string {
	if parked(r) {
		return "success"
	}
	return lgStatuses[r.Status]
}

func (s *dialect) runObject(r store.Run) lgRunObject {
	o := lgRunObject{
		RunID: r.ID, ThreadID: r.ThreadID, AssistantID: assistantID(r.Route), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Status: lgStatus(r), Metadata: json.RawMessage(`{}`), MultitaskStrategy: "reject", Kwargs: map[string]any{},
		Route: r.Route, Error: r.Error,
	}
	if o.Status == "" {
		o.Status = r.Status
	}
	if !isNull(r.Metadata) {
		o.Metadata = r.Metadata
	}
	var kept runAttrs
	if known := s.known.get(r.ID); known != nil {
		if !isNull(known.Metadata) {
			o.Metadata = known.Metadata
		}
		kept = runAttrs{AssistantID: known.AssistantID, Multitask: known.Multitask, Kwargs: known.Kwargs}
	} else if len(r.Attrs) > 0 {
		_ = json.Unmarshal(r.Attrs, &kept) // the run was started elsewhere: what it kept
	}
	if kept.Multitask != "" {
		o.MultitaskStrategy, o.Kwargs = kept.Multitask, kept.Kwargs
	}
	if kept.AssistantID != "" {
		o.AssistantID = kept.AssistantID
	}
	return o
}

// lgCreateRun is POST /threads/:id/runs: a background run. It answers at
// once with the run; join, stream or poll it by its id.
func (s *dialect) lgCreateRun(c echo.Context) error {
	run, req, body, err := s.parseLGRun(c, c.Param("id"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	started, queued, err := s.startLG(ctx, run, req, body)
	if err != nil {
		return err
	}
	if started == nil {
		return s.answerRun(c, run.ThreadID, queued.ID)
	}
	if beforeRunAnswer != nil {
		beforeRunAnswer(run.ThreadID, started)
	}
	r, err := s.host.GetRun(ctx, started.ID)
	if errors.Is(err, store.ErrNotFound) {
		// Another request rolled it back (and deleted it) since it
		// started: it was created, and stopped.
		now := time.Now().UTC()
		r, err = store.Run{ID: started.ID, ThreadID: run.ThreadID, Route: run.RouteID, Status: store.RunCancelled, CreatedAt: now, UpdatedAt: now}, nil
	}
	if err != nil {
		return err
	}
	setRunHeaders(c, run.ThreadID, started.ID)
	return c.JSON(http.StatusOK, s.runObject(r))
}

// beforeRunAnswer, when set (by tests), runs after POST
// /threads/:id/runs started its run, before it answers.
var beforeRunAnswer func(threadID string, run *runner.Run)

func (s *dialect) answerRun(c echo.Context, threadID, runID string) error {
	r, err := s.host.GetRun(c.Request().Context(), runID)
	if err != nil {
		return err
	}
	setRunHeaders(c, threadID, runID)
	return c.JSON(http.StatusOK, s.runObject(r))
}

// threadRun reads a run of the thread in the path, or answers 404.
func (s *dialect) threadRun(c echo.Context) (store.Run, error) {
	threadID, runID := c.Param("id"), c.Param("run")
	r, err := s.host.GetRun(c.Request().Context(), runID)
	if err != nil || r.ThreadID != threadID {
		if _, terr := s.host.GetThread(c.Request().Context(), threadID); terr != nil {
			return store.Run{}, terr
		}
		return store.Run{}, wire.NewError(http.StatusNotFound, "run_not_found", "thread "+threadID+" has no run "+runID)
	}
	return r, nil
}

func (s *dialect) lgGetRun(c echo.Context) error {
	r, err := s.threadRun(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.runObject(r))
}

// lgListRuns is GET /threads/:id/runs with LangGraph's paging and status
// filter.
func (s *dialect) lgListRuns(c echo.Context) error {
	ctx := c.Request().Context()
	runs, err := s.host.Runs(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	limit, offset := 10, 0
	if v := c.QueryParam("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
			return wire.BadBody("limit must be a number of runs")
		}
	}
	if v := c.QueryParam("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return wire.BadBody("offset must be a number of runs")
		}
	}
	var fields []string
	if q := c.QueryParams()["select"]; len(q) > 0 {
		if err := json.Unmarshal(queryList(q), &fields); err != nil {
			return wire.BadBody(`select must name fields of a run, like select=["run_id","status"]`)
		}
	}
	status := c.QueryParam("status")
	out := []any{}
	for _, r := range runs {
		o := s.runObject(r)
		if status != "" && o.Status != status {
			continue
		}
		kept, err := selectFields(o, fields)
		if err != nil {
			return err
		}
		out = append(out, kept)
	}
	start := min(offset, len(out))
	return c.JSON(http.StatusOK, out[start:min(start+limit, len(out))])
}
