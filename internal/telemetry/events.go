package telemetry

import (
	"encoding/json"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/dawn-go/dawn/stream"
)

// Plan item span events, named for what happened to the item.
const (
	EventItemStarted  = "plan.item.started"
	EventItemFinished = "plan.item.finished"
	EventItemFailed   = "plan.item.failed"
	EventItemSkipped  = "plan.item.skipped"
)

// itemEvents maps a plan item's new status to its span event.
var itemEvents = map[string]string{
	"in_progress": EventItemStarted,
	"completed":   EventItemFinished,
	"failed":      EventItemFailed,
	"skipped":     EventItemSkipped,
}

// lifecycle are the event types recorded as span events as they are, with
// their scalar fields as attributes.
var lifecycle = map[string]bool{
	stream.TypeAnswerRejected: true,
	"plan_paused":             true,
	"plan_done":               true,
	"plan_failed":             true,
	"plan_cancelled":          true,
	"plan_preview":            true,
	"plan_rejected":           true,
	stream.TypeError:          true,
}

// event records e on the run span; r.mu is held.
func (r *Run) event(e stream.Event) {
	switch {
	case e.Type == "plan_update":
		r.planUpdate(e.Data)
	case lifecycle[e.Type]:
		r.span.AddEvent(e.Type, trace.WithAttributes(r.scalars(e.Data)...))
	}
}

// planUpdate turns the statuses that changed since the last plan_update
// into item events.
func (r *Run) planUpdate(data json.RawMessage) {
	var u struct {
		Todos []struct {
			ID      string `json:"id"`
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"todos"`
	}
	if json.Unmarshal(data, &u) != nil {
		return
	}
	next := make([]string, len(u.Todos))
	for i, item := range u.Todos {
		next[i] = item.Status
		if i < len(r.plan) && r.plan[i] == item.Status {
			continue
		}
		name, ok := itemEvents[item.Status]
		if !ok {
			continue
		}
		attrs := []attribute.KeyValue{attribute.Int("dawn.plan.item.index", i), attribute.String("dawn.plan.item.status", item.Status)}
		if item.ID != "" {
			attrs = append(attrs, attribute.String("dawn.plan.item.id", item.ID))
		}
		if r.t.capture {
			attrs = append(attrs, attribute.String("dawn.plan.item.content", item.Content))
		}
		r.span.AddEvent(name, trace.WithAttributes(attrs...))
	}
	r.plan = next
}

// scalars are the string, number and bool fields of an event's data, as
// "dawn.<field>" attributes. Plan previews hold the model's text, so they
// are left out unless content is captured.
func (r *Run) scalars(data json.RawMessage) []attribute.KeyValue {
	var fields map[string]any
	if json.Unmarshal(data, &fields) != nil {
		return nil
	}
	var out []attribute.KeyValue
	for k, v := range fields {
		key := "dawn." + strings.ToLower(k)
		switch v := v.(type) {
		case string:
			if k == "text" && !r.t.capture {
				continue
			}
			if v != "" {
				out = append(out, attribute.String(key, v))
			}
		case float64:
			if v == float64(int64(v)) {
				out = append(out, attribute.Int64(key, int64(v)))
			} else {
				out = append(out, attribute.Float64(key, v))
			}
		case bool:
			out = append(out, attribute.Bool(key, v))
		}
	}
	return out
}
