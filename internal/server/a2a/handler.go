package a2a

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/thread"
)

// handler answers the A2A requests to one route's agent
// (a2asrv.RequestHandler). key is the route as the request path names it,
// which the runs it starts run.
type handler struct {
	host  Host
	key   string
	route *capabilities.Prepared
}

// taskAttrs is what a run that resumes a task keeps with it
// (store.Run.Attrs): the task's id, the id of its first run.
type taskAttrs struct {
	Task string `json:"a2a_task,omitempty"`
	// Push is the push notification config of the task's run.
	Push *a2a.PushConfig `json:"a2a_push,omitempty"`
}

// taskIDOf is the task run r belongs to: the task it resumes, or else its
// own id.
func taskIDOf(r store.Run) string {
	var a taskAttrs
	if len(r.Attrs) > 0 && json.Unmarshal(r.Attrs, &a) == nil && a.Task != "" {
		return a.Task
	}
	return r.ID
}

// started is a run this handler started for a task.
type started struct {
	run    *runner.Run
	taskID string
	// push is the run's push notification config, nil when none.
	push *a2a.PushConfig
}

// OnSendMessage starts (or, for a task waiting for input, resumes) a run
// and, unless the configuration says blocking: false, waits for it to end
// or park; it answers with the task as the store has it then.
func (h *handler) OnSendMessage(ctx context.Context, params *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	st, err := h.begin(ctx, params, false)
	if err != nil {
		return nil, err
	}
	if params.Config == nil || params.Config.Blocking == nil || *params.Config.Blocking {
		select {
		case <-st.run.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	t, err := h.task(ctx, st.taskID)
	if err != nil {
		return nil, err
	}
	return h.snapshot(ctx, t)
}

// OnSendMessageStream starts (or resumes) a run and streams its task: the
// task first, then status updates as it works (its plan, its tool calls),
// and at its end the artifacts and the final status.
func (h *handler) OnSendMessageStream(ctx context.Context, params *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		st, err := h.begin(ctx, params, true)
		if err != nil {
			yield(nil, err)
			return
		}
		first := &a2a.Task{ID: a2a.TaskID(st.taskID), ContextID: st.run.ThreadID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		if !yield(first, nil) {
			return
		}
		defer h.host.Subscribed()()
		h.follow(ctx, st.run.Log.Subscribe(0), st.taskID, st.run.ThreadID, st.run.ID, yield)
	}
}

// OnGetTask answers tasks/get: the task's state, and its artifacts once it
// completed.
func (h *handler) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	t, err := h.task(ctx, string(q.ID))
	if err != nil {
		return nil, err
	}
	return h.snapshot(ctx, t)
}

// OnCancelTask stops the task's run in flight, on this replica or another
// sharing the store, and answers with the task once the store records the
// end. A task that ended, or waits for input, cannot be cancelled.
func (h *handler) OnCancelTask(ctx context.Context, id *a2a.TaskIDParams) (*a2a.Task, error) {
	t, err := h.task(ctx, string(id.ID))
	if err != nil {
		return nil, err
	}
	switch t.run.Status {
	case store.RunRunning, store.RunPending:
	case store.RunInterrupted:
		return nil, fmt.Errorf("task %s waits for a decision and has no run to stop: answer it with a message on the task (a denial ends the held-back call): %w", t.id, a2a.ErrTaskNotCancelable)
	default:
		return nil, fmt.Errorf("task %s already ended (%s): %w", t.id, stateOf(t.run.Status), a2a.ErrTaskNotCancelable)
	}
	if err := h.stop(ctx, t.run); err != nil {
		return nil, h.rpcError(err, "task "+t.id)
	}
	if t, err = h.task(ctx, t.id); err != nil {
		return nil, err
	}
	return h.snapshot(ctx, t)
}

// stop cancels run r and waits for its end; a queued run leaves the
// queue.
func (h *handler) stop(ctx context.Context, r store.Run) error {
	if r.Status == store.RunPending {
		return h.host.Dequeue(ctx, r.ID)
	}
	if run := h.host.Active(ctx, r.ThreadID); run != nil && run.ID == r.ID {
		run.Cancel()
		select {
		case <-run.Done():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if remote, ok := h.host.RemoteRun(ctx, r.ThreadID); ok && remote.ID == r.ID {
		return h.host.StopRemote(ctx, remote, true)
	}
	return nil // it ended meanwhile
}

// OnResubscribeToTask streams a task again, from any replica: the task as
// it is now, then, while its run goes on, the run's updates from its
// start, and its end.
func (h *handler) OnResubscribeToTask(ctx context.Context, id *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t, err := h.task(ctx, string(id.ID))
		if err != nil {
			yield(nil, err)
			return
		}
		snap, err := h.snapshot(ctx, t)
		if err != nil || !yield(snap, nil) || snap.Status.State != a2a.TaskStateWorking {
			if err != nil {
				yield(nil, err)
			}
			return
		}
		defer h.host.Subscribed()()
		var src wire.EventSource
		if run := h.host.Active(ctx, t.run.ThreadID); run != nil && run.ID == t.run.ID {
			src = run.Log.Subscribe(0)
		} else {
			src = h.host.Follow(t.run.ID, 0)
		}
		h.follow(ctx, src, t.id, t.run.ThreadID, t.run.ID, yield)
	}
}

// OnGetExtendedAgentCard: the extended card is not served.
func (h *handler) OnGetExtendedAgentCard(context.Context) (*a2a.AgentCard, error) {
	return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
}

// begin starts the run a message asks for (start), and when the run has
// a push notification config, has its task POSTed when the run ends.
func (h *handler) begin(ctx context.Context, params *a2a.MessageSendParams, stream bool) (started, error) {
	st, err := h.start(ctx, params, stream)
	if err == nil && st.push != nil {
		go h.notifyAtEnd(ctx, st, st.push)
	}
	return st, err
}

// start starts the run a message asks for: a new task on the thread its
// contextId names (a new thread when it names none), or, for a message
// naming a task that waits for input, the run that answers it.
func (h *handler) start(ctx context.Context, params *a2a.MessageSendParams, stream bool) (started, error) {
	msg := params.Message
	if msg == nil {
		return started{}, fmt.Errorf(`params.message is required, like {"message":{"role":"user","messageId":"m-1","parts":[{"kind":"text","text":"Hello"}]}}: %w`, a2a.ErrInvalidParams)
	}
	var push *a2a.PushConfig
	if params.Config != nil && params.Config.PushConfig != nil {
		push = params.Config.PushConfig
		if err := h.checkPush(ctx, "configuration.pushNotificationConfig", push); err != nil {
			return started{}, err
		}
	}
	if msg.Role != a2a.MessageRoleUser {
		return started{}, fmt.Errorf("message.role must be %q, not %q: %w", a2a.MessageRoleUser, msg.Role, a2a.ErrInvalidParams)
	}
	if msg.TaskID != "" {
		return h.answer(ctx, msg, stream, push)
	}
	threadID := msg.ContextID
	if threadID == "" {
		threadID = "a2a-" + rand.Text()
	} else if err := wire.CheckThreadID(threadID); err != nil {
		return started{}, fmt.Errorf("message.contextId: %s: %w", err.Error(), a2a.ErrInvalidParams)
	}
	text, err := textOf(msg.Parts)
	if err != nil {
		return started{}, err
	}
	if limit := h.host.App().Config.Limits.WithDefaults().MessageBytes; len(text) > limit {
		return started{}, fmt.Errorf("message is %d bytes of text, over the %d byte limit (limits.message_bytes in dawn.yaml): %w", len(text), limit, a2a.ErrInvalidParams)
	}
	req := runner.Request{ThreadID: threadID, Route: h.key, Messages: []thread.Message{{Role: thread.RoleUser, Content: text}}, Stream: stream}
	if push != nil {
		req.Attrs = wire.MustJSON(taskAttrs{Push: push})
	}
	run, err := h.host.Start(ctx, req)
	if err != nil {
		return started{}, h.rpcError(err, "contextId "+threadID)
	}
	return started{run: run, taskID: run.ID, push: push}, nil
}

// textOf is a message's text: its text parts, and its data parts as JSON,
// one after another on lines of their own.
func textOf(parts a2a.ContentParts) (string, error) {
	var texts []string
	for i, p := range parts {
		switch p := p.(type) {
		case a2a.TextPart:
			texts = append(texts, p.Text)
		case a2a.DataPart:
			texts = append(texts, string(wire.MustJSON(p.Data)))
		default:
			return "", fmt.Errorf("message.parts[%d] is a file part; an agent here reads text and data parts only: %w", i, a2a.ErrUnsupportedContentType)
		}
	}
	text := strings.Join(texts, "\n")
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf(`message.parts must hold text to run, like [{"kind":"text","text":"Hello"}]: %w`, a2a.ErrInvalidParams)
	}
	return text, nil
}

// rpcError is err, from starting or resuming a run on what, as an A2A
// error, by the status the core gives it: another user's thread reads as
// a missing one, bad input is invalid params, a busy thread or a limit is
// a server error that says so, and a failure of the server is internal
// (and logged, not shown).
func (h *handler) rpcError(err error, what string) error {
	var ip *runner.InterruptPendingError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s not found: %w", what, a2a.ErrInvalidParams)
	case wire.Busy(err):
		return fmt.Errorf("%s has a task in flight: wait for it to end, or cancel it (tasks/cancel): %w", what, a2a.ErrServerError)
	case errors.As(err, &ip):
		return fmt.Errorf("%s waits for a decision on interrupt %s: answer the task that asked with a message naming its taskId: %w", what, strings.Join(ip.IDs, ", "), a2a.ErrInvalidParams)
	}
	we := h.host.Classify(err)
	switch {
	case we.Status < 500 && we.Status != http.StatusTooManyRequests && we.Status != http.StatusConflict:
		return fmt.Errorf("%s: %w", we.Msg, a2a.ErrInvalidParams)
	case we.Kind == "internal":
		h.host.Logger().Error("a2a: request failed", "route", h.key, "err", err)
		return a2a.ErrInternalError
	}
	return fmt.Errorf("%s: %w", we.Msg, a2a.ErrServerError)
}
