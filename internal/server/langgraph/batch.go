package langgraph

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// batchRuns is POST /runs/batch: a JSON array of run requests, each as
// POST /runs takes it, started as background runs on threads of their
// own. Every request is checked before any starts: one that is wrong
// refuses the batch, naming its index. The answer is the runs, in order.
func (s *dialect) batchRuns(c echo.Context) error {
	ctx := c.Request().Context()
	var items []json.RawMessage
	if err := wire.Decode(c, &items); err != nil {
		return err
	}
	if len(items) == 0 {
		return wire.BadBody(`a batch is a JSON array of run requests, each as POST /runs takes, such as [{"assistant_id": "agent", "input": {"messages": [...]}}]`)
	}
	type prepared struct {
		run  *lgRun
		req  runner.Request
		body lgRunBody
	}
	batch := make([]prepared, len(items))
	for i, raw := range items {
		at := "[" + strconv.Itoa(i) + "]"
		var body lgRunBody
		if err := json.Unmarshal(raw, &body); err != nil {
			return wire.BadBody(at + " is not a run request: " + wire.JSONError(err, at))
		}
		run, req, err := s.lgRunOf(ctx, body, uuid.NewString())
		if err != nil {
			return prefixed(at, err)
		}
		batch[i] = prepared{run, req, body}
	}
	out := make([]any, 0, len(batch))
	answered := make(chan struct{}) // the runs' threads stay until the answer is written
	defer close(answered)
	for i, p := range batch {
		started, queued, err := s.startStateless(ctx, p.run, p.req, p.body, answered)
		if err != nil {
			return prefixed("["+strconv.Itoa(i)+"]", err)
		}
		runID := queued.ID
		if started != nil {
			runID = started.ID
		}
		r, err := s.host.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		out = append(out, s.runObject(r))
	}
	return c.JSON(http.StatusOK, out)
}

// prefixed is err with its message led by where, when it is an API error.
func prefixed(where string, err error) error {
	var e *wire.Error
	if errors.As(err, &e) {
		copied := *e
		copied.Msg = where + ": " + e.Msg
		return &copied
	}
	return err
}
