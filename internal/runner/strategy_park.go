package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// settle finishes what a run strategy handed back. A result with
// interrupts parks the run: it returns the agent.Result the run ends with,
// whose values hold the interrupts (capabilities.InterruptsKey) and what
// the strategy parked with (capabilities.StrategyKey), and emits an
// interrupt event for each. historyLen is the length of the conversation
// the strategy started from, which the store already holds.
//
// A resumed strategy that stops the run without saving anything saves its
// values once, so that the answered interrupts do not stay in the store.
func (h *runHost) settle(ctx context.Context, strat *strategy, historyLen int, sr capabilities.StrategyResult) (*agent.Result, error) {
	if len(sr.Interrupts) == 0 {
		if strat.resumed && sr.Stop != "" && h.saves.Load() == 0 {
			return nil, h.Save(ctx, nil, sr.Values)
		}
		return nil, nil
	}
	if _, ok := strat.marker.(capabilities.StrategyResumer); !ok {
		return nil, fmt.Errorf("run strategy %s parked the run, but its capability cannot resume a parked run (capabilities.StrategyResumer)", strat.option)
	}
	list := make([]capabilities.Interrupt, len(sr.Interrupts))
	seen := map[string]bool{}
	for i, in := range sr.Interrupts {
		if in.ID == "" || in.Kind == "" || seen[in.ID] {
			return nil, fmt.Errorf("run strategy %s parked the run on interrupt %d with an empty or repeated id, or no kind", strat.option, i)
		}
		seen[in.ID] = true
		in.Type = capabilities.InterruptType
		if len(in.Detail) == 0 {
			in.Detail = json.RawMessage(`{}`)
		}
		list[i] = in
	}
	values := sr.Values.Clone()
	if values == nil {
		values = thread.State{}
	}
	values[capabilities.InterruptsKey] = mustJSON(list)
	values[capabilities.StrategyKey] = mustJSON(capabilities.StrategyPark{Option: strat.option, Data: sr.Park})
	for _, in := range list {
		h.Emit(stream.New(stream.TypeInterrupt, in))
	}
	from := min(historyLen+int(h.saved.Load()), len(sr.Messages))
	return &agent.Result{Messages: sr.Messages, Values: values, Interrupts: list, Unsaved: sr.Messages[from:]}, nil
}

// parkedOutput is the output and the record of a parked run. The output
// is the state values, which hold the interrupts, or a strategy's own
// output (an object) with the interrupts beside it under
// capabilities.InterruptsKey; the record, also the done event's output,
// says the run is interrupted and lists the interrupts, with the keys of
// the strategy's output.
func parkedOutput(res agent.Result, own json.RawMessage) (output, record json.RawMessage) {
	rec := map[string]json.RawMessage{}
	var obj map[string]json.RawMessage
	if own != nil && json.Unmarshal(own, &obj) == nil && obj != nil {
		maps.Copy(rec, obj)
		obj[capabilities.InterruptsKey] = mustJSON(res.Interrupts)
		output = mustJSON(obj)
	} else {
		output = stateValues(res.Messages, res.Values)
	}
	rec["interrupted"] = json.RawMessage(`true`)
	rec["interrupts"] = mustJSON(res.Interrupts)
	return output, mustJSON(rec)
}

// resumeStrategy returns the run that goes on from a thread a run strategy
// parked (cp's values hold capabilities.StrategyKey), or nil for a thread a
// hook parked. answers must answer pending one to one; a ResumeError says
// which does not. It changes nothing.
func resumeStrategy(a *app.App, p *capabilities.Prepared, cp store.Checkpoint, pending []capabilities.Interrupt, answers []capabilities.Answer) (*strategy, error) {
	raw, ok := cp.Values[capabilities.StrategyKey]
	if !ok {
		return nil, nil
	}
	var park capabilities.StrategyPark
	if err := json.Unmarshal(raw, &park); err != nil {
		return nil, fmt.Errorf("thread %s: the saved %s value cannot be read: %w", cp.ThreadID, capabilities.StrategyKey, err)
	}
	if err := matchAnswers(cp.ThreadID, pending, answers); err != nil {
		return nil, err
	}
	var resumer capabilities.StrategyResumer
	for _, mk := range a.Config.Markers {
		if rs, ok := mk.(capabilities.StrategyResumer); ok && rs.RunOption() == park.Option {
			resumer = rs
			break
		}
	}
	if resumer == nil {
		for _, an := range answers {
			if an.Status != capabilities.AnswerCancelled {
				return nil, &ResumeError{Msg: fmt.Sprintf("thread %s parked in run strategy %q, which the app no longer has (did the app change?); resume it with status \"cancelled\"", cp.ThreadID, park.Option)}
			}
		}
		// Every interrupt is cancelled: the run ends and clears them.
		drop := func(_ context.Context, _ capabilities.RunHost, history []thread.Message, values thread.State, _ []thread.Message) (capabilities.StrategyResult, error) {
			return capabilities.StrategyResult{Messages: history, Values: values, Stop: "cancelled"}, nil
		}
		return &strategy{option: park.Option, run: drop, resumed: true}, nil
	}
	run, err := resumer.Resume(capabilities.ParkedRun{Route: p, Data: park.Data, Interrupts: pending, Answers: answers, Routes: otherRoutes(a, p.Route.ID)})
	if err != nil {
		return nil, &ResumeError{Msg: err.Error()}
	}
	if run == nil {
		return nil, fmt.Errorf("run strategy %s resumed thread %s with no run", park.Option, cp.ThreadID)
	}
	return &strategy{option: park.Option, run: run, marker: resumer, resumed: true}, nil
}
