package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/runner"
	"github.com/dawn-go/dawn/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// decode reads a JSON body into v; an empty body leaves v as it is. Errors
// are 400 (or 413) with a message saying what is wrong.
func decode(c echo.Context, v any) error {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		if isTooLarge(err) {
			return newError(http.StatusRequestEntityTooLarge, "body_too_large", "request body is larger than the limit (limits.body_bytes in dawn.yaml)")
		}
		return newError(http.StatusBadRequest, "invalid_body", "cannot read request body: "+err.Error())
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

// checkThreadID bounds client-chosen thread ids.
func checkThreadID(id string) error {
	if len(id) == 0 || len(id) > 128 {
		return newError(http.StatusBadRequest, "invalid_thread_id", "thread id must be 1 to 128 characters")
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return newError(http.StatusBadRequest, "invalid_thread_id", "thread id may hold only letters, digits, '-', '_' and '.'")
		}
	}
	return nil
}

func (s *Server) getThread(c echo.Context) error {
	t, err := s.runs.Store().GetThread(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

func (s *Server) deleteThread(c echo.Context) error {
	id := c.Param("id")
	if s.runs.Active(id) != nil {
		return runner.ErrBusy
	}
	if err := s.runs.Store().DeleteThread(c.Request().Context(), id); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"thread_id": id, "deleted": true})
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

func (s *Server) cancel(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	if s.runs.Active(id) == nil {
		if _, err := s.runs.Store().GetThread(ctx, id); err != nil {
			return err
		}
	}
	run := s.runs.Active(id)
	cancelled := s.runs.Cancel(id)
	if cancelled && c.QueryParam("wait") != "false" {
		<-run.Done()
	}
	return c.JSON(http.StatusOK, map[string]any{"thread_id": id, "cancelled": cancelled})
}

func lastEventID(c echo.Context) int64 {
	v := c.Request().Header.Get("Last-Event-ID")
	if v == "" {
		v = c.QueryParam("after")
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}
