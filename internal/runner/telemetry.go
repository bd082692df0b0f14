package runner

import (
	"context"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/telemetry"
	"github.com/dawn-go/dawn/stream"
)

// runTrace is the telemetry of one run: its span, fed the run's events by
// a subscriber to its log, so that every event, whoever publishes it, can
// become a span event.
type runTrace struct {
	span *telemetry.Run
	sub  *stream.Subscription
	fed  chan struct{} // closed when the subscriber stops
}

// startTrace opens run's span under the span context in ctx (a caller's
// traceparent) and returns the context the run goes on with. It does
// nothing when telemetry is off.
func (m *Manager) startTrace(ctx context.Context, run *Run) context.Context {
	if m.tel == nil {
		return ctx
	}
	ctx, span := m.tel.StartRun(ctx, telemetry.RunInfo{ThreadID: run.ThreadID, RouteID: run.RouteID, RunID: run.ID, Model: run.Model})
	t := &runTrace{span: span, fed: make(chan struct{})}
	run.trace = t
	if !span.Recording() {
		close(t.fed) // nothing to feed: only metrics are on
		return ctx
	}
	t.sub = run.Log.Subscribe(0)
	go func() {
		defer close(t.fed)
		for {
			e, err := t.sub.Next(context.Background())
			if err != nil {
				return
			}
			t.span.Event(e)
		}
	}()
	return ctx
}

// endTrace ends run's span with the run's outcome, after feeding it the
// events published so far. It is called before anyone hears of the end of
// the run.
func (run *Run) endTrace(status string) {
	t := run.trace
	if t == nil {
		return
	}
	if t.sub != nil {
		t.sub.Close()
		<-t.fed
		for _, e := range run.Log.Since(t.sub.LastID()) {
			t.span.Event(e)
		}
	}
	if run.err != nil && status == store.RunSuccess {
		status = store.RunError
	}
	t.span.End(status, run.err)
}

// storeTimer starts timing a store write named op; the returned function
// records its latency. Without telemetry it costs nothing.
func (m *Manager) storeTimer(op string) func() {
	if m.tel == nil {
		return func() {}
	}
	start := time.Now()
	return func() { m.tel.StoreWrite(op, time.Since(start)) }
}
