package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// decode reads a JSON body into v; an empty body leaves v as it is. Errors
// are 400 (or 413) with a message saying what is wrong.
func decode(c echo.Context, v any) error {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return bodyReadError(err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark some editors and tools write
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return newError(http.StatusBadRequest, "invalid_body", "request body is not the JSON this endpoint expects: "+err.Error())
	}
	return nil
}

type createThreadBody struct {
	ThreadID string          `json:"thread_id"`
	Metadata json.RawMessage `json:"metadata"`
}

func (s *Server) createThread(c echo.Context) error {
	var body createThreadBody
	if err := decode(c, &body); err != nil {
		return err
	}
	if len(body.Metadata) > 0 && string(body.Metadata) != "null" && body.Metadata[0] != '{' {
		return newError(http.StatusBadRequest, "invalid_body", "metadata must be a JSON object")
	}
	id := body.ThreadID
	if id == "" {
		id = uuid.NewString()
	} else if err := checkThreadID(id); err != nil {
		return err
	}
	t, err := s.runs.Store().CreateThread(c.Request().Context(), id, body.Metadata)
	if errors.Is(err, store.ErrExists) {
		return newError(http.StatusConflict, "thread_exists", "thread "+id+" already exists")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

// checkThreadID bounds client-chosen thread ids: 1 to 128 letters,
// digits, '-', '_' and '.', and not "." or "..", which every URL
// normalizer (fetch, the LangGraph SDK, curl) drops from a path, so that
// no client could name the thread again.
func checkThreadID(id string) error {
	if len(id) == 0 || len(id) > 128 {
		return newError(http.StatusBadRequest, "invalid_thread_id", "thread id must be 1 to 128 characters")
	}
	if id == "." || id == ".." {
		return newError(http.StatusBadRequest, "invalid_thread_id", "thread id "+strconv.Quote(id)+" is a path segment URLs drop, so the thread could not be named again: choose an id with a letter or digit")
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return newError(http.StatusBadRequest, "invalid_thread_id", "thread id "+strconv.Quote(id)+" may hold only letters, digits, '-', '_' and '.'")
		}
	}
	return nil
}

// getThread is GET /threads/:id: the thread, with its state values and
// pending interrupts beside it as a LangGraph thread has them.
func (s *Server) getThread(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.runs.Store().GetThread(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	cp, err := s.runs.Store().Latest(ctx, t.ID)
	if errors.Is(err, store.ErrNotFound) {
		return c.JSON(http.StatusOK, lgThread{Thread: t, Values: lcValues(t.ID, nil, nil), Interrupts: map[string]any{}})
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, lgThread{Thread: t, Values: lcValues(t.ID, cp.Messages, cp.Values), Interrupts: threadInterrupts(t.ID, cp.Values)})
}

func (s *Server) deleteThread(c echo.Context) error {
	id := c.Param("id")
	if err := s.runs.DeleteThread(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent) // Dawn answers 204 with no body
}

// getState is GET /threads/:id/state: the thread's latest state in the
// shape both dialects read (see threadState).
func (s *Server) getState(c echo.Context) error {
	return s.lgGetState(c)
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

func (s *Server) listRuns(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if _, err := s.runs.Store().GetThread(ctx, id); err != nil {
		return err
	}
	runs, err := s.runs.Store().Runs(ctx, id)
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
func (s *Server) cancel(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	run, reached := s.runs.Cancel(id)
	if run == nil {
		if _, err := s.runs.Store().GetThread(ctx, id); err != nil {
			return err
		}
		if r, ok := s.runs.RemoteRun(ctx, id); ok {
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

// lastEventID reads the Last-Event-ID header, or else the after query
// parameter: 0 when neither is set, and a 400 naming the one that is not
// a whole number from 0 up.
func lastEventID(c echo.Context) (int64, error) {
	name, v := "Last-Event-ID header", c.Request().Header.Get("Last-Event-ID")
	if v == "" {
		name, v = "after parameter", c.QueryParam("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, newError(http.StatusBadRequest, "invalid_last_event_id", "the "+name+" "+strconv.Quote(v)+" is not an event id: send the id: of the last event received, a whole number (0 replays from the start)")
	}
	return n, nil
}
