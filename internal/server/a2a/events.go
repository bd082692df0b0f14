package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/stream"
)

// follow streams the events of run runID of task taskID from src as A2A
// events until the run's end, then the task's artifacts and its final
// status as the store recorded them. A client that leaves stops the
// stream, not the run.
func (h *handler) follow(ctx context.Context, src wire.EventSource, taskID, threadID, runID string, yield func(a2a.Event, error) bool) {
	tr := &translator{taskID: taskID, threadID: threadID, mirrors: mirrorsOf(h.route, h.host.App().Config.Markers), current: map[string]json.RawMessage{}}
	for {
		e, err := src.Next(ctx)
		if err != nil && !errors.Is(err, io.EOF) {
			if ctx.Err() == nil {
				yield(nil, h.rpcError(err, "task "+taskID))
			}
			return
		}
		if err == nil && e.Type != stream.TypeDone {
			for _, ev := range tr.translate(e) {
				if !yield(ev, nil) {
					return
				}
			}
			continue
		}
		h.end(ctx, taskID, yield)
		return
	}
}

// end sends a task's artifacts, then its status as the final event.
func (h *handler) end(ctx context.Context, taskID string, yield func(a2a.Event, error) bool) {
	t, err := h.task(ctx, taskID)
	if err != nil {
		yield(nil, err)
		return
	}
	snap, err := h.snapshot(ctx, t)
	if err != nil {
		yield(nil, err)
		return
	}
	for _, art := range snap.Artifacts {
		if !yield(&a2a.TaskArtifactUpdateEvent{TaskID: snap.ID, ContextID: snap.ContextID, Artifact: art, LastChunk: true}, nil) {
			return
		}
	}
	yield(&a2a.TaskStatusUpdateEvent{TaskID: snap.ID, ContextID: snap.ContextID, Status: snap.Status, Final: true}, nil)
}

// translator turns one run's events into A2A status updates: each change
// of a mirrored state field (the plan) as a data part of the fields it
// sets, and each tool call as a data part {"tool_call": …}. Text chunks
// are not sent as they stream: the answer is an artifact at the end.
// Subagents' events stay inside the task.
type translator struct {
	taskID, threadID string
	mirrors          mirrors
	// current holds the mirrored fields as the events so far set them.
	current map[string]json.RawMessage
}

func (t *translator) translate(e stream.Event) []a2a.Event {
	if strings.HasPrefix(e.Type, stream.SubagentPrefix) {
		return nil
	}
	if e.Type == stream.TypeToolCall {
		return []a2a.Event{t.update(e.Type, map[string]any{"tool_call": jsonValue(e.Data)})}
	}
	for _, m := range t.mirrors.all {
		fields, ok := m.MirrorEvent(e.Type, e.Data, func(f string) json.RawMessage { return t.current[f] })
		if !ok {
			continue
		}
		data := map[string]any{}
		for k, v := range fields {
			t.current[k] = v
			data[k] = jsonValue(v)
		}
		return []a2a.Event{t.update(e.Type, data)}
	}
	return nil
}

// update is a working status update whose message holds data, from the
// Dawn event of type typ (named in the message's metadata).
func (t *translator) update(typ string, data map[string]any) *a2a.TaskStatusUpdateEvent {
	msg := &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent, TaskID: a2a.TaskID(t.taskID), ContextID: t.threadID,
		Parts: a2a.ContentParts{a2a.DataPart{Data: data}}, Metadata: map[string]any{"dawn_event": typ}}
	return &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(t.taskID), ContextID: t.threadID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg}}
}
