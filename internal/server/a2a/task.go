package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
)

// task is an A2A task as the store has it: its id (the id of its first
// run) and its latest run, the one that resumed it last.
type task struct {
	id  string
	run store.Run
	// latest says run is its thread's newest run, so the thread's state
	// is the task's.
	latest bool
}

// task reads task id of this handler's route. A task of another user, of
// another route, or a run that only resumed a task, is not found.
func (h *handler) task(ctx context.Context, id string) (task, error) {
	if id == "" {
		return task{}, fmt.Errorf(`params.id is required: the task's id, like {"id":"…"}: %w`, a2a.ErrInvalidParams)
	}
	notFound := fmt.Errorf("task %q not found at %s%s: %w", id, Prefix, h.key, a2a.ErrTaskNotFound)
	first, err := h.host.GetRun(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return task{}, notFound
	case err != nil:
		return task{}, h.rpcError(err, "task "+id)
	case taskIDOf(first) != id || first.Route != h.route.Route.ID:
		return task{}, notFound
	}
	runs, err := h.host.Runs(ctx, first.ThreadID)
	if err != nil {
		return task{}, h.rpcError(err, "task "+id)
	}
	newest := true
	for _, r := range runs {
		if r.Status == store.RunPending {
			continue
		}
		if taskIDOf(r) == id {
			return task{id: id, run: r, latest: newest}, nil
		}
		newest = false
	}
	return task{id: id, run: first}, nil
}

// stateOf is the A2A state of a run's store status.
func stateOf(status string) a2a.TaskState {
	switch status {
	case store.RunRunning:
		return a2a.TaskStateWorking
	case store.RunPending:
		return a2a.TaskStateSubmitted
	case store.RunSuccess:
		return a2a.TaskStateCompleted
	case store.RunInterrupted:
		return a2a.TaskStateInputRequired
	case store.RunCancelled:
		return a2a.TaskStateCanceled
	case store.RunError:
		return a2a.TaskStateFailed
	}
	return a2a.TaskStateUnknown
}

// record is what the store keeps of a run's end (store.Run.Output).
type record struct {
	Answer     string                   `json:"answer"`
	Interrupts []capabilities.Interrupt `json:"interrupts"`
	Error      string                   `json:"error"`
}

func recordOf(r store.Run) record {
	var rec record
	if len(r.Output) > 0 {
		_ = json.Unmarshal(r.Output, &rec) // a record the store kept; a shape it lacks is left empty
	}
	if rec.Error == "" {
		rec.Error = r.Error
	}
	return rec
}

// snapshot is task t as A2A shows it: its status (with the answer, the
// error, or what it waits for) and, once it completed, its artifacts.
func (h *handler) snapshot(ctx context.Context, t task) (*a2a.Task, error) {
	out := &a2a.Task{ID: a2a.TaskID(t.id), ContextID: t.run.ThreadID, Status: h.status(t)}
	if t.run.Status == store.RunSuccess {
		arts, err := h.artifacts(ctx, t)
		if err != nil {
			return nil, err
		}
		out.Artifacts = arts
	}
	return out, nil
}

// status is task t's status.
func (h *handler) status(t task) a2a.TaskStatus {
	when := t.run.UpdatedAt
	st := a2a.TaskStatus{State: stateOf(t.run.Status), Timestamp: &when}
	rec := recordOf(t.run)
	var parts a2a.ContentParts
	switch t.run.Status {
	case store.RunSuccess:
		if rec.Answer != "" {
			parts = a2a.ContentParts{a2a.TextPart{Text: rec.Answer}}
		}
	case store.RunError:
		parts = a2a.ContentParts{a2a.TextPart{Text: rec.Error}}
	case store.RunInterrupted:
		parts = question(rec.Interrupts)
	}
	if parts != nil {
		st.Message = &a2a.Message{ID: t.run.ID + "-status", Role: a2a.MessageRoleAgent, TaskID: a2a.TaskID(t.id), ContextID: t.run.ThreadID, Parts: parts}
	}
	return st
}

// question says what a task that waits for input asks, and how to answer:
// a text part for a person or a model, and a data part with the
// interrupts themselves.
func question(interrupts []capabilities.Interrupt) a2a.ContentParts {
	var kinds []string
	for _, in := range interrupts {
		kinds = append(kinds, fmt.Sprintf("%s (kind %s)", in.ID, in.Kind))
	}
	text := fmt.Sprintf("The task waits for a person's decision on %d interrupt(s): %s. Answer with a message on this task (its taskId): "+
		`its text is the decision for every interrupt, or a data part {"decision": …} gives one for every interrupt, `+
		`or {"resume":[{"interruptId":"…","status":"resolved","payload":…}]} answers each one.`, len(interrupts), strings.Join(kinds, ", "))
	list := make([]any, 0, len(interrupts))
	for _, in := range interrupts {
		list = append(list, jsonValue(wire.MustJSON(in)))
	}
	return a2a.ContentParts{a2a.TextPart{Text: text}, a2a.DataPart{Data: map[string]any{"interrupts": list}}}
}

// jsonValue is raw decoded as a plain Go value; nil for JSON it cannot
// decode.
func jsonValue(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// artifacts are a completed task's results: its answer as text, and when
// its run is the thread's newest, the route's mirrored state fields (the
// plan's todos) as they ended, one data artifact per field.
func (h *handler) artifacts(ctx context.Context, t task) ([]*a2a.Artifact, error) {
	var out []*a2a.Artifact
	if answer := recordOf(t.run).Answer; answer != "" {
		out = append(out, &a2a.Artifact{ID: "answer", Name: "answer", Description: "The agent's final answer.", Parts: a2a.ContentParts{a2a.TextPart{Text: answer}}})
	}
	if !t.latest {
		return out, nil
	}
	m := mirrorsOf(h.route, h.host.App().Config.Markers)
	if len(m.fields) == 0 {
		return out, nil
	}
	cp, err := h.host.Latest(ctx, t.run.ThreadID)
	if err != nil {
		return nil, h.rpcError(err, "task "+t.id)
	}
	for _, f := range m.fields {
		raw, ok := cp.Values[f]
		if !ok {
			continue
		}
		if view, ok := m.view(h.route, f, raw); ok {
			raw = view
		}
		out = append(out, &a2a.Artifact{ID: a2a.ArtifactID(f), Name: f, Description: "The state field " + f + " as the task ended.",
			Parts: a2a.ContentParts{a2a.DataPart{Data: map[string]any{f: jsonValue(raw)}}}})
	}
	return out, nil
}

// mirrors are the capabilities whose events carry state fields
// (capabilities.StateMirror), and the route's fields they contribute.
type mirrors struct {
	all    []capabilities.StateMirror
	fields []string
	byName map[string]capabilities.StateMirror
	owner  map[string]string
}

func mirrorsOf(p *capabilities.Prepared, markers []capabilities.Marker) mirrors {
	m := mirrors{byName: map[string]capabilities.StateMirror{}, owner: map[string]string{}}
	for _, mk := range markers {
		if sm, ok := mk.(capabilities.StateMirror); ok {
			m.all = append(m.all, sm)
			m.byName[mk.Name()] = sm
		}
	}
	for _, f := range p.Fields {
		if _, ok := m.byName[f.Capability]; ok && f.Capability != "" {
			m.fields = append(m.fields, f.Name)
			m.owner[f.Name] = f.Capability
		}
	}
	return m
}

// view is field's stored value raw as its capability shows it.
func (m mirrors) view(p *capabilities.Prepared, field string, raw json.RawMessage) (json.RawMessage, bool) {
	sm, ok := m.byName[m.owner[field]]
	if !ok {
		return nil, false
	}
	return sm.MirrorField(p, field, raw)
}

// answer starts the run that answers task id, which waits for input, with
// the decision msg carries; the run keeps push, or else the push
// notification config of the run it answers.
func (h *handler) answer(ctx context.Context, msg *a2a.Message, stream bool, push *a2a.PushConfig) (started, error) {
	t, err := h.task(ctx, string(msg.TaskID))
	if err != nil {
		return started{}, err
	}
	if msg.ContextID != "" && msg.ContextID != t.run.ThreadID {
		return started{}, fmt.Errorf("message.contextId %q is not the context of task %s (%s): %w", msg.ContextID, t.id, t.run.ThreadID, a2a.ErrInvalidParams)
	}
	if t.run.Status != store.RunInterrupted || !t.latest {
		return started{}, fmt.Errorf("task %s is %s, not waiting for input: a message naming a task answers what it asks; send a new message (without taskId) in contextId %s to go on: %w",
			t.id, stateOf(t.run.Status), t.run.ThreadID, a2a.ErrInvalidParams)
	}
	cp, err := h.host.Latest(ctx, t.run.ThreadID)
	if err != nil {
		return started{}, h.rpcError(err, "task "+t.id)
	}
	pending, err := capabilities.PendingInterrupts(cp.Values)
	if err != nil {
		return started{}, h.rpcError(err, "task "+t.id)
	}
	answers, err := decisions(msg.Parts, pending)
	if err != nil {
		return started{}, err
	}
	if push == nil {
		push = pushOf(t.run)
	}
	run, err := h.host.Resume(ctx, runner.ResumeRequest{ThreadID: t.run.ThreadID, Route: h.key, Answers: answers, Stream: stream, Attrs: wire.MustJSON(taskAttrs{Task: t.id, Push: push})})
	if err != nil {
		return started{}, h.rpcError(err, "task "+t.id)
	}
	return started{run: run, taskID: t.id, push: push}, nil
}

// decisions are the answers a message gives to the pending interrupts: a
// data part's "resume" (one answer per interrupt), or else its
// "decision", or else the message's text, as the payload of every one.
func decisions(parts a2a.ContentParts, pending []capabilities.Interrupt) ([]capabilities.Answer, error) {
	var payload json.RawMessage
	for i, p := range parts {
		d, ok := p.(a2a.DataPart)
		if !ok {
			continue
		}
		if raw, ok := d.Data["resume"]; ok {
			return resumeAnswers(i, raw)
		}
		if v, ok := d.Data["decision"]; ok && payload == nil {
			payload = wire.MustJSON(v)
		}
	}
	if payload == nil {
		var texts []string
		for _, p := range parts {
			if tp, ok := p.(a2a.TextPart); ok && strings.TrimSpace(tp.Text) != "" {
				texts = append(texts, strings.TrimSpace(tp.Text))
			}
		}
		if len(texts) == 0 {
			return nil, fmt.Errorf(`the message answers nothing: give the decision as its text, as a data part {"decision": …}, or as {"resume":[{"interruptId","status","payload"}]}: %w`, a2a.ErrInvalidParams)
		}
		payload = wire.MustJSON(strings.Join(texts, "\n"))
	}
	answers := make([]capabilities.Answer, 0, len(pending))
	for _, in := range pending {
		answers = append(answers, capabilities.Answer{InterruptID: in.ID, Status: capabilities.AnswerResolved, Payload: payload})
	}
	return answers, nil
}

// resumeAnswers reads a data part's "resume": a list of answers, each
// exactly {"interruptId","status","payload"}.
func resumeAnswers(part int, v any) ([]capabilities.Answer, error) {
	dec := json.NewDecoder(bytes.NewReader(wire.MustJSON(v)))
	dec.DisallowUnknownFields()
	var list []wire.ResumeAnswer
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf(`message.parts[%d].data.resume must be a list of {"interruptId","status","payload"}: %s: %w`, part, wire.JSONError(err, "resume"), a2a.ErrInvalidParams)
	}
	answers := make([]capabilities.Answer, 0, len(list))
	for _, a := range list {
		answers = append(answers, a.Answer())
	}
	return answers, nil
}
