package dawn

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/runs"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/labstack/echo/v4"
)

// runBody is the body of runs/wait and runs/stream. Unknown fields are
// ignored so Dawn and LangGraph clients that send more keep working.
type runBody struct {
	Route string `json:"route"`
	// AssistantID is accepted as a synonym of Route.
	AssistantID string   `json:"assistant_id"`
	Input       runInput `json:"input"`
	// Webhook is a URL the run is POSTed to when it ends or parks.
	Webhook string `json:"webhook"`
	// MultitaskStrategy says what the run does when the thread has a run
	// in flight: reject (the default), interrupt, rollback or enqueue.
	MultitaskStrategy string `json:"multitask_strategy"`
	// AfterSeconds delays the run: it is queued and starts that long
	// from now, once the thread is free.
	AfterSeconds float64 `json:"after_seconds"`
	// CheckpointID is a checkpoint of the thread (GET
	// /threads/:id/history) to start from: a new branch of it.
	CheckpointID string `json:"checkpoint_id"`
	// fields are all the body's top-level fields, where the run strategies'
	// options are found (capabilities.RunStrategy's RunOption, such as
	// plan_first: "off", "auto", "always" or "preview").
	fields map[string]json.RawMessage
}

func (b *runBody) UnmarshalJSON(data []byte) error {
	type plain runBody
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		return err
	}
	return json.Unmarshal(data, &b.fields)
}

type runInput struct {
	Messages []inputMessage
	Values   map[string]json.RawMessage
}

type inputMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Type is LangChain's name for the role ("human").
	Type string `json:"type"`
}

func (in *runInput) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return errors.New("input must be a JSON object like {\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}")
	}
	if raw, ok := fields["messages"]; ok {
		if err := json.Unmarshal(raw, &in.Messages); err != nil {
			return errors.New("input.messages must be an array of {\"role\",\"content\"} objects with string content")
		}
		delete(fields, "messages")
	}
	in.Values = fields
	return nil
}

// parseRun reads a run request and how it is admitted on its thread:
// its multitask strategy and, for a delayed run, when it may start.
func (s *api) parseRun(c echo.Context) (runner.Request, runs.Admission, error) {
	req, body, err := s.parseRunBody(c)
	if err != nil {
		return req, runs.Admission{}, err
	}
	var adm runs.Admission
	if adm.Strategy, err = checkMultitask(body.MultitaskStrategy, runs.Reject); err != nil {
		return req, adm, err
	}
	adm.At, err = wire.NotBefore(body.AfterSeconds, time.Now())
	return req, adm, err
}

func (s *api) parseRunBody(c echo.Context) (runner.Request, runBody, error) {
	var body runBody
	if err := wire.Decode(c, &body); err != nil {
		return runner.Request{}, body, err
	}
	route := body.Route
	if route == "" {
		route = body.AssistantID
	}
	if route == "" {
		return runner.Request{}, body, newError(http.StatusBadRequest, "invalid_body", `route is required, like {"route":"/support/acme","input":{"messages":[{"role":"user","content":"Hello"}]}}`)
	}
	id := c.Param("id")
	if err := wire.CheckThreadID(id); err != nil {
		return runner.Request{}, body, err
	}
	opts, err := s.host.RunOptions(body.fields)
	if err != nil {
		return runner.Request{}, body, err
	}
	req := runner.Request{ThreadID: id, Route: route, Values: body.Input.Values, Options: opts, Webhook: body.Webhook, Checkpoint: body.CheckpointID}
	for _, m := range body.Input.Messages {
		role := m.Role
		switch {
		case role == "" && (m.Type == "human" || m.Type == ""):
			role = thread.RoleUser
		case role == "" && m.Type == "system":
			role = thread.RoleSystem
		case role == "human":
			role = thread.RoleUser
		}
		req.Messages = append(req.Messages, thread.Message{Role: role, Content: m.Content})
	}
	return req, body, nil
}

func (s *api) runWait(c echo.Context) error {
	// The run executes here, and waits on its model: it is admitted in a
	// function of its own, whose large frame is gone by then (see
	// agent.RunWith).
	run, threadID, err := s.admitWait(c)
	if run == nil {
		return err
	}
	return answerWait(c, threadID, run)
}

// admitWait admits the run of a runs/wait request, to execute on the
// caller's goroutine. Without a run to wait for, it returns the request's
// answer: an error, or nil once it has answered.
func (s *api) admitWait(c echo.Context) (*runner.Run, string, error) {
	req, adm, err := s.parseRun(c)
	if err != nil {
		return nil, "", err
	}
	// It goes on if the client leaves (its context is not the request's),
	// and the handler returns once it is done.
	req.OnCaller = true
	ctx := c.Request().Context()
	run, queued, err := s.host.Admit(ctx, req, adm)
	if err != nil {
		return nil, "", checkpointError(req, err)
	}
	if run == nil {
		c.Response().Header().Set("Dawn-Run-Id", queued.ID)
		live, now, err := s.host.AwaitQueued(ctx, queued)
		switch {
		case ctx.Err() != nil:
			return nil, "", nil // the client left; the run stays queued
		case errors.Is(err, store.ErrNotFound):
			return nil, "", newError(http.StatusConflict, "run_cancelled", "run "+queued.ID+" on thread "+req.ThreadID+" was cancelled before it started")
		case err != nil:
			return nil, "", err
		case live == nil:
			return nil, "", s.answerStored(c, now)
		}
		run = live
	}
	return run, req.ThreadID, nil
}

// answerWait answers runs/wait with run's end once it is done; a run
// started to execute on the caller's goroutine executes now.
func answerWait(c echo.Context, threadID string, run *runner.Run) error {
	run.Execute()
	return answerEnd(c, threadID, run)
}

// answerEnd answers runs/wait with the end of run, which is done.
func answerEnd(c echo.Context, threadID string, run *runner.Run) error {
	if run.Cancelled() {
		return newError(http.StatusConflict, "run_cancelled", "the run on thread "+threadID+" was cancelled before it finished; its completed steps are kept")
	}
	if err := run.Err(); err != nil {
		var me *runner.ModelError
		var tl *runner.TurnLimitError
		switch {
		case errors.As(err, &me):
			return newError(http.StatusBadGateway, "model_error", err.Error())
		case errors.As(err, &tl):
			return newError(http.StatusInternalServerError, "turn_limit", err.Error())
		case errors.Is(err, store.ErrUnavailable):
			return err
		}
		return newError(http.StatusInternalServerError, "run_failed", err.Error())
	}
	return c.JSONBlob(http.StatusOK, run.Output())
}

func (s *api) runStream(c echo.Context) error {
	req, adm, err := s.parseRun(c)
	if err != nil {
		return err
	}
	req.Stream = true
	run, queued, err := s.host.Admit(c.Request().Context(), req, adm)
	if err != nil {
		return checkpointError(req, err)
	}
	if run == nil {
		// The stream opens now and carries the run's events once it
		// starts, here or on another replica.
		return s.writeStream(c, s.host.QueuedEvents(queued, 0), queued.ID)
	}
	return s.writeStream(c, run.Log.Subscribe(0), run.ID)
}

// joinStream lets a client that lost its connection pick up a run's stream
// after the last event id it saw (Last-Event-ID header or ?after=N). A run
// in flight here is followed live; any other (running on another replica,
// or ended) is read from the store's event log, a page at a time.
func (s *api) joinStream(c echo.Context) error {
	id, runID := c.Param("id"), c.Param("run")
	after, err := wire.LastEventID(c)
	if err != nil {
		return err
	}
	if run := s.host.Active(c.Request().Context(), id); run != nil && run.ID == runID {
		return s.writeStream(c, run.Log.Subscribe(after), runID)
	}
	r, err := s.host.GetRun(c.Request().Context(), runID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.ThreadID != id) {
		return runNotFoundOf(c)
	}
	if err != nil {
		return err
	}
	if r.Status == store.RunPending {
		return s.writeStream(c, s.host.QueuedEvents(r, after), runID)
	}
	return s.followRemote(c, runID, after)
}

// runNotFoundOf is the 404 of a run the thread in c's path does not
// have.
func runNotFoundOf(c echo.Context) error {
	return newError(http.StatusNotFound, "run_not_found", "thread "+c.Param("id")+" has no run "+c.Param("run"))
}

// readySource is an eventSource that can tell whether its next event is
// there without waiting (stream.Subscription.Ready).
type readySource interface {
	Ready() bool
}

// ready reports whether src has its next event (or its end) at hand; a
// source that cannot tell is never ready, so each of its events is
// flushed on its own.
func ready(src wire.EventSource) bool {
	r, ok := src.(readySource)
	return ok && r.Ready()
}

func (s *api) writeStream(c echo.Context, src wire.EventSource, runID string) error {
	defer s.host.Subscribed()()
	w := c.Response()
	wire.StartSSE(c, runID)
	w.WriteHeader(http.StatusOK)
	w.Flush()
	ctx := c.Request().Context()
	buf := make([]byte, 0, 1024)
	// Events already there are written together and flushed once, before
	// the stream waits for the next: a burst costs one write to the
	// client, and no event waits behind another. The keep-alive timer is
	// set only for a wait.
	pending := false
	for {
		var e stream.Event
		var err error
		if ready(src) {
			e, err = src.Next(ctx)
		} else {
			if pending {
				w.Flush()
				pending = false
			}
			waitCtx, cancel := context.WithTimeout(ctx, wire.KeepAlive)
			e, err = src.Next(waitCtx)
			cancel()
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if pending {
				w.Flush()
			}
			return nil
		case ctx.Err() != nil:
			return nil // client gone; the run goes on
		case errors.Is(err, context.DeadlineExceeded):
			if err := stream.WriteComment(w, "keep-alive"); err != nil {
				return nil
			}
			w.Flush()
			continue
		default:
			return nil
		}
		buf = stream.AppendSSE(buf[:0], e)
		if _, err := w.Write(buf); err != nil {
			return nil
		}
		pending = true
		if e.Type == stream.TypeDone {
			w.Flush()
			return nil
		}
	}
}

// checkpointError is err, a run's start failing, or a 404 naming the
// checkpoint when the run was to start from one the thread does not have.
func checkpointError(req runner.Request, err error) error {
	if req.Checkpoint != "" && errors.Is(err, store.ErrNotFound) {
		return newError(http.StatusNotFound, "checkpoint_not_found", err.Error()+"; list the thread's checkpoints with GET /threads/"+req.ThreadID+"/history")
	}
	return err
}
