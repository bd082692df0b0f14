package runner

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/webhook"
)

// Webhooks sends the POST a run request's webhook URL asks for at the
// end of the run (webhook.Sender). The runner records each delivery in
// the store's outbox with the end of its run; the sender sends it from
// there.
type Webhooks interface {
	// Check checks a request's webhook URL before the run starts.
	Check(ctx context.Context, url string) error
	// Attempts is how many times a delivery is tried.
	Attempts() int
	// Start sends the due deliveries of the outbox until the sender is
	// closed.
	Start(box webhook.Outbox)
	// Wake has the sender look for due deliveries now.
	Wake()
}

// WebhookDelivery tells how the webhook of a run went, as the store
// records it, so that every server on the store answers the same; it
// fails with store.ErrNotFound for a run without one (or one swept).
func (m *Manager) WebhookDelivery(ctx context.Context, runID string) (webhook.Delivery, error) {
	w, err := m.outbox.GetWebhook(ctx, runID)
	if err != nil {
		return webhook.Delivery{}, err
	}
	return webhook.DeliveryOf(w), nil
}

// checkWebhook refuses a request whose webhook URL this server cannot or
// will not POST to.
func (m *Manager) checkWebhook(ctx context.Context, url string) error {
	return m.CheckWebhook(ctx, url)
}

// CheckWebhook checks a webhook URL as a run request's is checked, for a
// request that starts runs later (a cron): nil for "", an *InputError
// saying what is wrong otherwise.
func (m *Manager) CheckWebhook(ctx context.Context, url string) error {
	if url == "" {
		return nil
	}
	if m.webhooks == nil {
		return &InputError{Msg: "webhook is not available on this server: it runs without webhook settings"}
	}
	if err := m.webhooks.Check(ctx, url); err != nil {
		return &InputError{Msg: err.Error()}
	}
	return nil
}

// webhookOf is the delivery the end of run asks for, with status and
// errText as the POST reports them, or nil when its request asked for
// none. It is recorded with the end of the run (store.Finish.Webhook).
func (m *Manager) webhookOf(run *Run, status, errText string) *store.Webhook {
	if run.webhook == "" || m.webhooks == nil {
		return nil
	}
	p := webhook.Payload{RunID: run.ID, ThreadID: run.ThreadID, AssistantID: run.RouteID, Status: status, Output: run.output, Error: errText}
	switch {
	case status == store.RunSuccess:
		p.Values = run.output
	case run.interrupts != nil:
		p.Interrupts, _ = json.Marshal(run.interrupts)
	}
	body, err := json.Marshal(p)
	if err != nil {
		m.logger.Error("cannot encode a run's webhook payload; it is not sent", "thread", run.ThreadID, "run", run.ID, "err", err)
		return nil
	}
	return &store.Webhook{URL: run.webhook, Payload: body, MaxAttempts: m.webhooks.Attempts()}
}

// addWebhook records hook, the delivery of a run the store no longer has
// (rolled back), in the outbox on its own.
func (m *Manager) addWebhook(run *Run, hook *store.Webhook) {
	if hook == nil {
		return
	}
	hook.RunID, hook.ThreadID = run.ID, run.ThreadID
	if err := m.outbox.AddWebhook(context.Background(), *hook); err != nil && !errors.Is(err, store.ErrNotFound) {
		m.logger.Error("cannot record the webhook of a rolled-back run; it is not sent", "thread", run.ThreadID, "run", run.ID, "err", err)
	}
}

// queuedWebhooks is a store that records the webhook deliveries of queued
// runs that end without starting (store.DB.SetQueuedWebhook).
type queuedWebhooks interface {
	SetQueuedWebhook(store.QueuedWebhook)
}

// queuedWebhook is the delivery of queued run q, which ends without
// starting (cancelled, or failed) with status and errText, or nil when
// its request asked for none. The store records it with the run's end,
// however the run came to end.
func (m *Manager) queuedWebhook(q store.QueuedRun, status, errText string) *store.Webhook {
	var kept queuedRequest
	if err := json.Unmarshal(q.Request, &kept); err != nil || kept.Webhook == "" {
		return nil
	}
	run := &Run{ID: q.ID, ThreadID: kept.ThreadID, RouteID: q.Route, webhook: kept.Webhook}
	switch status {
	case store.RunCancelled:
		run.output = json.RawMessage(`{"cancelled":true}`)
		errText = ""
	default:
		run.output = mustJSON(map[string]string{"error": errText})
	}
	w := m.webhookOf(run, status, errText)
	if w != nil {
		w.ThreadID = kept.ThreadID
	}
	return w
}

// wakeWebhooks has the sender look for a delivery the store may just
// have recorded with the end of a queued run.
func (m *Manager) wakeWebhooks() {
	if m.webhooks != nil {
		m.webhooks.Wake()
	}
}

// sendWebhooks has the sender send a delivery just recorded.
func (m *Manager) sendWebhooks(hook *store.Webhook) {
	if hook != nil {
		m.webhooks.Wake()
	}
}

// SendsWebhooks reports whether this server has webhook settings.
func (m *Manager) SendsWebhooks() bool { return m.webhooks != nil }

// Notify records hook, a delivery another wire shapes for the end of one
// of its runs (webhook.PushPayload), in the outbox, to be sent with the
// retries and signature of a run's webhook; it fails with an *InputError
// when this server sends no webhooks.
func (m *Manager) Notify(ctx context.Context, hook store.Webhook) error {
	if m.webhooks == nil {
		return &InputError{Msg: "webhook is not available on this server: it runs without webhook settings"}
	}
	hook.MaxAttempts = m.webhooks.Attempts()
	if err := m.outbox.AddWebhook(ctx, hook); err != nil {
		return err
	}
	m.webhooks.Wake()
	return nil
}
