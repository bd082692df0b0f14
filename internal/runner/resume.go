package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/jsonschema-go/jsonschema"
)

// InterruptPendingError refuses a new run on a thread whose last run parked
// for a person's decision: the thread goes on only through a resume.
type InterruptPendingError struct {
	ThreadID string
	IDs      []string
}

func (e *InterruptPendingError) Error() string {
	return fmt.Sprintf("thread %s is waiting for a decision on interrupt %s; answer it with POST /threads/%s/resume before sending a new message",
		e.ThreadID, strings.Join(e.IDs, ", "), e.ThreadID)
}

// ErrNoInterruptPending is returned by Resume for a thread with nothing to
// answer.
var ErrNoInterruptPending = errors.New("the thread has no pending interrupt to resume; start a run instead")

// ResumeError is a resume request whose answers do not fit the pending
// interrupts. Nothing was changed.
type ResumeError struct{ Msg string }

func (e *ResumeError) Error() string { return e.Msg }

// ResumeRequest answers every pending interrupt of a parked thread.
type ResumeRequest struct {
	ThreadID string
	// Route must name the route the thread parked on.
	Route   string
	Answers []capabilities.Answer
	// Stream asks the model to stream text as "chunk" events.
	Stream bool
	// Webhook is a URL the run is POSTed to when it ends or parks again.
	Webhook string
	// Overrides change what the route's agent.md sets, for this run.
	Overrides Overrides
	// Attrs is a JSON value kept with the run for its starter
	// (store.Run.Attrs), as Request's; nil keeps none.
	Attrs json.RawMessage
}

// Resume answers the thread's pending interrupts and starts the run that
// goes on from the held-back tool calls, like Start. Answers must name
// every pending interrupt exactly once; a ResumeError says which does not,
// and leaves the thread as it was.
func (m *Manager) Resume(ctx context.Context, req ResumeRequest) (*Run, error) {
	if req.Answers == nil {
		req.Answers = []capabilities.Answer{}
	}
	return m.start(ctx, Request{ThreadID: req.ThreadID, Route: req.Route, Stream: req.Stream, Webhook: req.Webhook, Overrides: req.Overrides, Attrs: req.Attrs}, req.Answers)
}

// resolve checks answers against the pending interrupts of cp and asks the
// route's hooks what each held-back call does. It changes nothing.
func resolve(app *app.App, p *capabilities.Prepared, cp store.Checkpoint, pending []capabilities.Interrupt, answers []capabilities.Answer) (map[string]capabilities.Resolution, error) {
	if err := matchAnswers(cp.ThreadID, pending, answers); err != nil {
		return nil, err
	}
	byID := map[string]capabilities.Interrupt{}
	for _, in := range pending {
		byID[in.ID] = in
	}
	out := map[string]capabilities.Resolution{}
	for i, a := range answers {
		at := fmt.Sprintf("resume[%d]", i)
		in := byID[a.InterruptID]
		owner, msgs, values, err := parkedAt(app, p, cp.Messages, cp.Values, in.Path)
		if err != nil {
			return nil, fmt.Errorf("thread %s: interrupt %s: %w", cp.ThreadID, in.ID, err)
		}
		call, ok := lastCalls(msgs)[in.CallID]
		if !ok {
			return nil, fmt.Errorf("thread %s: interrupt %s holds back tool call %q, which the last assistant message does not have", cp.ThreadID, in.ID, in.CallID)
		}
		r, err := resolveOne(owner, values, in, call, a)
		if err != nil {
			return nil, &ResumeError{Msg: fmt.Sprintf("%s (interrupt %s): %v", at, a.InterruptID, err)}
		}
		key := call.ID
		if in.After { // raised after the call ran: it holds nothing back
			key = capabilities.AfterID(in.ID)
		}
		out[capabilities.ResolutionKey(in.Path, key)] = r
	}
	return out, nil
}

// matchAnswers checks that answers answer every pending interrupt exactly
// once, each with a status and a payload as its status needs: the same
// check for the interrupts hooks raise and those a strategy parks on.
func matchAnswers(threadID string, pending []capabilities.Interrupt, answers []capabilities.Answer) error {
	ids := pendingIDs(pending)
	known := map[string]bool{}
	for _, id := range ids {
		known[id] = true
	}
	seen := map[string]bool{}
	for i, a := range answers {
		at := fmt.Sprintf("resume[%d]", i)
		switch {
		case a.InterruptID == "":
			return &ResumeError{Msg: at + ".interruptId is required; pending: " + strings.Join(ids, ", ")}
		case !known[a.InterruptID]:
			return &ResumeError{Msg: fmt.Sprintf("%s: interrupt %q is not pending on thread %s; pending: %s", at, a.InterruptID, threadID, strings.Join(ids, ", "))}
		case seen[a.InterruptID]:
			return &ResumeError{Msg: fmt.Sprintf("%s: interrupt %q is answered twice; answer each once", at, a.InterruptID)}
		case a.Status != capabilities.AnswerResolved && a.Status != capabilities.AnswerCancelled:
			return &ResumeError{Msg: fmt.Sprintf("%s (interrupt %s): status must be \"resolved\" or \"cancelled\", not %q", at, a.InterruptID, a.Status)}
		case a.Status == capabilities.AnswerCancelled && len(a.Payload) > 0:
			return &ResumeError{Msg: fmt.Sprintf("%s (interrupt %s): a cancelled answer has no payload; send only interruptId and status", at, a.InterruptID)}
		case a.Status == capabilities.AnswerResolved && len(a.Payload) == 0:
			return &ResumeError{Msg: fmt.Sprintf("%s (interrupt %s): a resolved answer needs a payload with the decision", at, a.InterruptID)}
		}
		seen[a.InterruptID] = true
	}
	var missing []string
	for _, id := range ids {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return &ResumeError{Msg: fmt.Sprintf("resume must answer every pending interrupt at once; missing: %s", strings.Join(missing, ", "))}
	}
	return nil
}

// lastCalls returns the tool calls of the last assistant message of msgs,
// by id.
func lastCalls(msgs []thread.Message) map[string]thread.ToolCall {
	calls := map[string]thread.ToolCall{}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msg := msgs[i]; msg.Role == thread.RoleAssistant {
			for _, c := range msg.ToolCalls {
				calls[c.ID] = c
			}
			break
		}
	}
	return calls
}

// parkedAt follows path (task call ids) from the root run through the
// parked subagent frames, and returns the route, conversation and state of
// the run that raised the interrupt.
func parkedAt(a *app.App, p *capabilities.Prepared, msgs []thread.Message, values thread.State, path []string) (*capabilities.Prepared, []thread.Message, thread.State, error) {
	for _, id := range path {
		frames := map[string]capabilities.SubagentFrame{}
		if _, err := values.Decode(capabilities.SubagentsKey, &frames); err != nil {
			return nil, nil, nil, fmt.Errorf("the saved %s value cannot be read: %w", capabilities.SubagentsKey, err)
		}
		frame, ok := frames[id]
		if !ok {
			return nil, nil, nil, fmt.Errorf("no parked subagent for task call %q", id)
		}
		child, ok := a.Routes[p.Route.Subagents[frame.Subagent]]
		if !ok {
			return nil, nil, nil, fmt.Errorf("subagent %q of route %s is gone or broken; run `dawn check`", frame.Subagent, p.Route.ID)
		}
		p, msgs, values = child, frame.Messages, frame.Values
	}
	return p, msgs, values, nil
}

// resolveOne asks the route's hooks what call does now that in is answered.
func resolveOne(p *capabilities.Prepared, values thread.State, in capabilities.Interrupt, call thread.ToolCall, a capabilities.Answer) (capabilities.Resolution, error) {
	if in.InCall {
		// The call asked mid-call: it runs again and takes the answer.
		return capabilities.Resolution{Run: true, Answer: &a}, nil
	}
	for _, h := range p.Hooks {
		if h.Resolve == nil {
			continue
		}
		r, handled, err := h.Resolve(values, in, call, a)
		if err != nil {
			return r, err
		}
		if !handled {
			continue
		}
		if r.Run && len(r.Input) > 0 && !in.After {
			if err := checkInput(p, call.Name, r.Input); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	if in.Kind == PauseKind {
		return resolvePause(in, a), nil
	}
	if a.Status == capabilities.AnswerCancelled {
		return capabilities.Resolution{Refusal: "a person declined this call"}, nil
	}
	return capabilities.Resolution{}, fmt.Errorf("no capability of route %s answers %q interrupts any more (did the app change?); resume it with status \"cancelled\"", p.Route.ID, in.Kind)
}

// checkInput validates edited tool arguments against the tool's schema.
func checkInput(p *capabilities.Prepared, name string, input json.RawMessage) error {
	tool := p.Tool(name)
	if tool == nil {
		return fmt.Errorf("route %s has no tool %q to run with the edited arguments", p.Route.ID, name)
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return fmt.Errorf("the edited arguments are not JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("the edited arguments must be a JSON object, as tool %q takes", name)
	}
	raw := tool.Spec().Schema
	if len(raw) == 0 {
		return nil
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		return fmt.Errorf("tool %q has an input schema that cannot be read: %v", name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("tool %q has an input schema that does not resolve: %v", name, err)
	}
	if err := resolved.Validate(v); err != nil {
		return fmt.Errorf("the edited arguments do not match tool %q's input schema: %v", name, err)
	}
	return nil
}

// pendingIDs lists the ids of pending.
func pendingIDs(pending []capabilities.Interrupt) []string {
	ids := make([]string, 0, len(pending))
	for _, in := range pending {
		ids = append(ids, in.ID)
	}
	return slices.Clip(ids)
}
