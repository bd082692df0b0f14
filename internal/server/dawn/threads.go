package dawn

import (
	"encoding/json"
	"net/http"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// createThread is POST /threads: a thread of the caller's
// (wire.CreateThread).
func (s *api) createThread(c echo.Context) error {
	t, err := wire.CreateThread(c, s.host)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

func (s *api) deleteThread(c echo.Context) error {
	id := c.Param("id")
	if err := s.host.DeleteThread(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent) // Dawn answers 204 with no body
}

type runInfo struct {
	RunID     string          `json:"run_id"`
	ThreadID  string          `json:"thread_id"`
	Route     string          `json:"route"`
	Status    string          `json:"status"`
	Error     string          `json:"error,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	CreatedAt any             `json:"created_at"`
	UpdatedAt any             `json:"updated_at"`
}

func (s *api) listRuns(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if _, err := s.host.GetThread(ctx, id); err != nil {
		return err
	}
	runs, err := s.host.Runs(ctx, id)
	if err != nil {
		return err
	}
	out := make([]runInfo, 0, len(runs))
	for _, r := range runs {
		out = append(out, runInfo{RunID: r.ID, ThreadID: r.ThreadID, Route: r.Route, Status: r.Status, Error: r.Error, Output: r.Output, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt})
	}
	return c.JSON(http.StatusOK, out)
}

// cancel is POST /threads/:id/cancel: it stops the run in flight and, unless
// ?wait=false, waits until the run is recorded as cancelled. It answers
// 200 {"thread_id", "status":"interrupted"}, or 409 no_run_in_flight when
// there is no run to stop (or the run finished before the cancel reached
// it).
func (s *api) cancel(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	run, reached := s.host.Cancel(ctx, id)
	if run == nil {
		if _, err := s.host.GetThread(ctx, id); err != nil {
			return err
		}
		if r, ok := s.host.RemoteRun(ctx, id); ok {
			return s.cancelRemote(c, r)
		}
		return newError(http.StatusConflict, "no_run_in_flight", "thread "+id+" has no run in flight to cancel")
	}
	if reached && c.QueryParam("wait") == "false" {
		return c.JSON(http.StatusOK, cancelBody{ThreadID: id, Status: "interrupted"})
	}
	select {
	case <-run.Done():
	case <-ctx.Done():
		return ctx.Err()
	}
	if !run.Cancelled() {
		return newError(http.StatusConflict, "no_run_in_flight", "the run on thread "+id+" finished before the cancel reached it")
	}
	return c.JSON(http.StatusOK, cancelBody{ThreadID: id, Status: "interrupted"})
}

// cancelBody is Dawn's answer to a cancel; its status is always
// "interrupted", Dawn's name for a run stopped on request.
type cancelBody struct {
	ThreadID string `json:"thread_id"`
	Status   string `json:"status"`
}
