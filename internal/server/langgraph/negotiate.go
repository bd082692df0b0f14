package langgraph

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// This file holds the requests to Dawn's own endpoints that are in the
// LangGraph dialect: which ones the dialect claims (by body or query),
// and how it serves the POST /threads it claims.

// The requests to Dawn's own run endpoints that are in the LangGraph
// dialect are claimed here and told apart by the core (wire.Mux's
// Claim), which serves every other request to them with Dawn's handler.

// namesAssistant claims a run request (runs/wait, runs/stream) whose body
// names assistant_id and no route.
func namesAssistant(c echo.Context) (bool, error) {
	data, err := wire.PeekBody(c)
	if err != nil {
		return false, err
	}
	var names struct {
		Route       *string `json:"route"`
		AssistantID *string `json:"assistant_id"`
	}
	return json.Unmarshal(wire.TrimBOM(data), &names) == nil && names.AssistantID != nil && names.Route == nil, nil
}

// joinsStream claims GET /threads/:id/runs/:run/stream: the LangGraph
// SDK's joinStream always sends cancel_on_disconnect, and its reconnection
// follows the Location a LangGraph stream names, which carries
// stream_mode; anything else is Dawn's rejoin.
func joinsStream(c echo.Context) (bool, error) {
	q := c.QueryParams()
	return q.Has("cancel_on_disconnect") || q.Has("stream_mode"), nil
}

// listsRuns claims GET /threads/:id/runs: the LangGraph SDK always sends
// limit and offset; Dawn's clients send no query.
func listsRuns(c echo.Context) (bool, error) {
	q := c.QueryParams()
	return q.Has("limit") || q.Has("offset") || q.Has("status") || q.Has("select"), nil
}

// lgThreadBody is what the LangGraph dialect reads of POST /threads
// beside wire.NewThread.
type lgThreadBody struct {
	wire.NewThread
	IfExists   string          `json:"if_exists"`
	Supersteps json.RawMessage `json:"supersteps"`
	GraphID    string          `json:"graph_id"`
}

// peekThreadBody reads what the dialect reads of a POST /threads body,
// and leaves the body for wire.CreateThread. A body that does not read
// is Dawn's to answer: its fields are zero.
func peekThreadBody(c echo.Context) (lgThreadBody, error) {
	var body lgThreadBody
	data, err := wire.PeekBody(c)
	if err != nil {
		return body, err
	}
	_ = json.Unmarshal(data, &body)
	return body, nil
}

// createsThread claims POST /threads whose body names if_exists or
// supersteps, LangGraph's; any other is Dawn's, which creates the thread
// alike (wire.CreateThread).
func createsThread(c echo.Context) (bool, error) {
	body, err := peekThreadBody(c)
	if err != nil {
		return false, err
	}
	if _, err := wire.ThreadTTL(body.TTL); err != nil {
		return false, nil // Dawn's handler answers it, as the dialect would
	}
	return body.IfExists != "" || !isNull(body.Supersteps), nil
}

// lgCreateThread serves POST /threads with if_exists ("do_nothing"
// returns the existing thread) or supersteps.
func (s *dialect) lgCreateThread(c echo.Context) error {
	body, err := peekThreadBody(c)
	if err != nil {
		return err
	}
	switch {
	case !isNull(body.Supersteps):
		if body.GraphID == "" { // the SDK sends graphId as metadata.graph_id
			var meta struct {
				GraphID string `json:"graph_id"`
			}
			_ = json.Unmarshal(body.Metadata, &meta) // wire.CreateThread answers a bad metadata
			body.GraphID = meta.GraphID
		}
		return s.createWithSupersteps(c, body.Supersteps, body.GraphID)
	case body.IfExists != "raise" && body.IfExists != "do_nothing":
		return wire.BadBody(`if_exists must be "raise" or "do_nothing", not ` + strconv.Quote(body.IfExists))
	}
	if body.IfExists == "do_nothing" && body.ThreadID != "" {
		if t, err := s.host.GetThread(c.Request().Context(), body.ThreadID); err == nil {
			return c.JSON(http.StatusOK, t)
		}
	}
	t, err := wire.CreateThread(c, s.host)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}
