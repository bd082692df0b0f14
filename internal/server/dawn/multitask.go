package dawn

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/internal/runs"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/labstack/echo/v4"
)

// checkMultitask checks a multitask_strategy value (runs.ValidStrategy);
// "" is def.
func checkMultitask(value, def string) (string, error) {
	if value == "" {
		return def, nil
	}
	if runs.ValidStrategy(value) {
		return value, nil
	}
	return "", newError(http.StatusBadRequest, "invalid_body", "multitask_strategy must be one of reject, interrupt, rollback, enqueue, not "+strconv.Quote(value))
}

// answerStored answers runs/wait for run r, which runs on another replica
// or has ended: with its output once it has ended, read from its done
// event in the store.
func (s *api) answerStored(c echo.Context, r store.Run) error {
	ctx := c.Request().Context()
	f := s.host.Follow(r.ID, 0)
	defer f.Close()
	var done stream.Event
	for {
		e, err := f.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // the client left; the run goes on
			}
			if errors.Is(err, store.ErrNotFound) {
				return newError(http.StatusConflict, "run_cancelled", "run "+r.ID+" on thread "+r.ThreadID+" was cancelled before it started, or rolled back")
			}
			return err
		}
		if e.Type == stream.TypeDone {
			done = e
		}
	}
	var d struct {
		Output json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(done.Data, &d)
	var ended struct {
		Error     string `json:"error"`
		Cancelled bool   `json:"cancelled"`
	}
	_ = json.Unmarshal(d.Output, &ended)
	switch {
	case ended.Cancelled:
		return newError(http.StatusConflict, "run_cancelled", "the run on thread "+r.ThreadID+" was cancelled before it finished; its completed steps are kept")
	case ended.Error != "":
		return newError(http.StatusInternalServerError, "run_failed", ended.Error)
	}
	return c.JSONBlob(http.StatusOK, d.Output)
}
