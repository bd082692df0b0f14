package runner

import (
	"context"
	"encoding/json"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/webhook"
)

// Webhooks sends the POST a run request's webhook URL asks for at the
// end of the run (webhook.Sender).
type Webhooks interface {
	// Check checks a request's webhook URL before the run starts.
	Check(ctx context.Context, url string) error
	// Deliver sends p to url in the background; it must not block.
	Deliver(url string, p webhook.Payload)
	// Delivery tells how the webhook of a run went, while it is
	// remembered.
	Delivery(runID string) (webhook.Delivery, bool)
}

// WebhookDelivery tells how the webhook of a run this server ran went;
// ok is false for a run without one, or one no longer remembered.
func (m *Manager) WebhookDelivery(runID string) (d webhook.Delivery, ok bool) {
	if m.webhooks == nil {
		return d, false
	}
	return m.webhooks.Delivery(runID)
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

// notify hands the end of a run whose request asked for a webhook to the
// sender. It is called once per run, after the end is recorded.
func (m *Manager) notify(run *Run, status, errText string) {
	if run.webhook == "" || m.webhooks == nil {
		return
	}
	p := webhook.Payload{RunID: run.ID, ThreadID: run.ThreadID, AssistantID: run.RouteID, Status: status, Output: run.output, Error: errText}
	switch {
	case status == store.RunSuccess:
		p.Values = run.output
	case run.interrupts != nil:
		p.Interrupts, _ = json.Marshal(run.interrupts)
	}
	m.webhooks.Deliver(run.webhook, p)
}
