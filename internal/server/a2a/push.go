package a2a

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/webhook"
)

// TokenHeader carries a push notification config's token.
const TokenHeader = "X-A2A-Notification-Token"

// pushOf is the push notification config kept with run r, nil when none.
func pushOf(r store.Run) *a2a.PushConfig {
	var a taskAttrs
	if len(r.Attrs) > 0 && json.Unmarshal(r.Attrs, &a) == nil {
		return a.Push
	}
	return nil
}

// checkPush checks a push notification config a request brings: its URL
// as a run's webhook URL is checked (a signing secret on the server, no
// loopback or private target unless the app allows it).
func (h *handler) checkPush(ctx context.Context, field string, c *a2a.PushConfig) error {
	if !h.host.SendsWebhooks() {
		return fmt.Errorf("%s: this server sends no push notifications: it runs without webhook settings (webhooks in dawn.yaml); follow the task with message/stream, tasks/resubscribe or tasks/get: %w", field, a2a.ErrPushNotificationNotSupported)
	}
	if c.URL == "" {
		return fmt.Errorf(`%s.url is required: where to POST the task, like {"url":"https://example.com/a2a-push","token":"…"}: %w`, field, a2a.ErrInvalidParams)
	}
	if err := h.host.CheckWebhook(ctx, c.URL); err != nil {
		return fmt.Errorf("%s.url: %s: %w", field, err.Error(), a2a.ErrInvalidParams)
	}
	return nil
}

// notifyAtEnd waits for the end of run st and, when its task is then
// waiting for input or ended, records the task (its status and, once it
// completed, its artifacts) in the webhook outbox for c's URL, with c's
// token in TokenHeader. ctx carries the caller, whose task it reads; its
// cancellation does not stop the wait.
func (h *handler) notifyAtEnd(ctx context.Context, st started, c *a2a.PushConfig) {
	ctx = context.WithoutCancel(ctx)
	<-st.run.Done()
	t, err := h.task(ctx, st.taskID)
	if err != nil || t.run.ID != st.run.ID {
		h.host.Logger().Warn("a2a: no push notification: the task's run is not the one that ended", "task", st.taskID, "run", st.run.ID, "err", err)
		return
	}
	snap, err := h.snapshot(ctx, t)
	if err != nil {
		h.host.Logger().Error("a2a: cannot read the task for its push notification; it is not sent", "task", st.taskID, "err", err)
		return
	}
	if snap.Status.State != a2a.TaskStateInputRequired && !snap.Status.State.Terminal() {
		return
	}
	body, err := json.Marshal(snap)
	if err != nil {
		h.host.Logger().Error("a2a: cannot encode the task for its push notification; it is not sent", "task", st.taskID, "err", err)
		return
	}
	var headers map[string]string
	if c.Token != "" {
		headers = map[string]string{TokenHeader: c.Token}
	}
	payload, err := webhook.PushPayload(webhook.Push{Body: body, Headers: headers})
	if err == nil {
		err = h.host.Notify(ctx, store.Webhook{RunID: st.run.ID, ThreadID: st.run.ThreadID, URL: c.URL, Payload: payload})
	}
	if err != nil {
		h.host.Logger().Error("a2a: cannot record the task's push notification; it is not sent", "task", st.taskID, "err", err)
	}
}

// OnGetTaskPushConfig answers the push notification config the caller's
// task was given (the one of its latest message that gave one).
func (h *handler) OnGetTaskPushConfig(ctx context.Context, q *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	t, err := h.task(ctx, string(q.TaskID))
	if err != nil {
		return nil, err
	}
	c := pushOf(t.run)
	if c == nil || (q.ConfigID != "" && q.ConfigID != c.ID) {
		return nil, fmt.Errorf("task %s has no push notification config%s: give one with a message (configuration.pushNotificationConfig): %w", t.id, idText(q.ConfigID), a2a.ErrInvalidParams)
	}
	return &a2a.TaskPushConfig{TaskID: a2a.TaskID(t.id), Config: *c}, nil
}

func idText(id string) string {
	if id == "" {
		return ""
	}
	return " with id " + id
}

// OnListTaskPushConfig lists the task's push notification config: none or
// one.
func (h *handler) OnListTaskPushConfig(ctx context.Context, q *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	t, err := h.task(ctx, string(q.TaskID))
	if err != nil {
		return nil, err
	}
	if c := pushOf(t.run); c != nil {
		return []*a2a.TaskPushConfig{{TaskID: a2a.TaskID(t.id), Config: *c}}, nil
	}
	return []*a2a.TaskPushConfig{}, nil
}

// OnSetTaskPushConfig is not served: a task's config is kept with the run
// a message starts, so a message gives it.
func (h *handler) OnSetTaskPushConfig(ctx context.Context, c *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	if _, err := h.task(ctx, string(c.TaskID)); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("a push notification config is set with the message that starts or answers the task (configuration.pushNotificationConfig), not afterwards: %w", a2a.ErrPushNotificationNotSupported)
}

// OnDeleteTaskPushConfig is not served, as OnSetTaskPushConfig.
func (h *handler) OnDeleteTaskPushConfig(ctx context.Context, q *a2a.DeleteTaskPushConfigParams) error {
	if _, err := h.task(ctx, string(q.TaskID)); err != nil {
		return err
	}
	return fmt.Errorf("a task's push notification config stays with the run it was given to; the next message on the task may give another: %w", a2a.ErrPushNotificationNotSupported)
}
