package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// description is the tool's description: the route's, and its id.
func (t *tool) description() string {
	d := "Runs the Dawn route " + t.route.Route.ID + "."
	if desc := strings.TrimSpace(t.route.Route.Agent.Description); desc != "" {
		d = desc + " (Dawn route " + t.route.Route.ID + ")"
	}
	return d
}

// call returns the handler of t's tool calls: it runs the route once and
// answers with the run's outcome. A call that cannot start, or a run that
// fails, is a tool error (isError) whose text says why.
func (e *endpoint) call(t *tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		rr, err := e.request(ctx, t, req.Params.Arguments)
		if err != nil {
			return toolError(err.Error()), nil
		}
		run, err := e.host.Start(ctx, rr)
		if err != nil {
			return toolError(fmt.Sprintf("%s: the run did not start: %v", t.name, err)), nil
		}
		progress := progressSender(ctx, req)
		if !e.watch(ctx, run, progress) {
			return nil, ctx.Err()
		}
		return result(t, rr.Route, run), nil
	}
}

// request reads a call's arguments into the run it starts.
func (e *endpoint) request(ctx context.Context, t *tool, raw json.RawMessage) (runner.Request, error) {
	var args map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return runner.Request{}, fmt.Errorf("%s: the arguments must be a JSON object: %v", t.name, err)
		}
	}
	var props struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(t.schema, &props)
	for name := range args {
		if _, ok := props.Properties[name]; !ok {
			return runner.Request{}, fmt.Errorf("%s: unknown argument %q; the tool takes %s", t.name, name, strings.Join(slices.Sorted(maps.Keys(props.Properties)), ", "))
		}
	}
	var msg string
	if err := json.Unmarshal(args[argMessage], &msg); err != nil || msg == "" {
		return runner.Request{}, fmt.Errorf("%s: argument %q is required: a non-empty string, the user message to run", t.name, argMessage)
	}
	if limit := e.host.App().Config.Limits.WithDefaults().MessageBytes; len(msg) > limit {
		return runner.Request{}, fmt.Errorf("%s: argument %q is %d bytes, over the %d byte limit (limits.message_bytes in dawn.yaml)", t.name, argMessage, len(msg), limit)
	}
	path, err := t.path(args)
	if err != nil {
		return runner.Request{}, fmt.Errorf("%s: %v", t.name, err)
	}
	threadID, err := e.threadID(ctx, t, args[argThreadID])
	if err != nil {
		return runner.Request{}, err
	}
	values := map[string]json.RawMessage{}
	for _, f := range t.fields {
		if v, ok := args[f.Name]; ok {
			values[f.Name] = v
		}
	}
	if _, err := t.route.ApplyInput(t.route.InitialState(), values); err != nil {
		return runner.Request{}, fmt.Errorf("%s: %v", t.name, err)
	}
	return runner.Request{ThreadID: threadID, Route: path, Messages: []thread.Message{{Role: thread.RoleUser, Content: msg}}, Values: values}, nil
}

// threadID is the thread a call runs on: the thread_id argument, which
// must name a thread that exists, or else a new thread.
func (e *endpoint) threadID(ctx context.Context, t *tool, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return uuid.NewString(), nil
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return "", fmt.Errorf("%s: argument %q must be a string, a thread id an earlier call returned", t.name, argThreadID)
	}
	if err := wire.CheckThreadID(id); err != nil {
		return "", fmt.Errorf("%s: argument %q: %v", t.name, argThreadID, err)
	}
	if _, err := e.host.GetThread(ctx, id); errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%s: thread %q does not exist: pass the thread_id of an earlier call's result, or leave it out to start a new thread", t.name, id)
	} else if err != nil {
		return "", err
	}
	return id, nil
}

// coreEvents are the run's own event types; every other event (and its
// subagent.-prefixed form) comes from a capability, like plan_update, and
// is sent as a progress notification.
var coreEvents = []string{
	stream.TypeChunk, stream.TypeToolCall, stream.TypeToolResult, stream.TypeDone, stream.TypeError,
	stream.TypeAnswerRejected, stream.TypeModelRetry, stream.TypeModelCall, stream.TypeInterrupt,
	stream.TypeSubagentStart, stream.TypeSubagentMessage, stream.TypeSubagentToolCall,
	stream.TypeSubagentToolResult, stream.TypeSubagentEnd,
}

// progressSender returns what sends a capability event as a progress
// notification, or nil when the client sent no progress token. The
// message is the event's type and data ("plan_update {...}"); _meta
// carries them as "dawn/event" and "dawn/data".
func progressSender(ctx context.Context, req *sdk.CallToolRequest) func(stream.Event) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	n := 0
	return func(ev stream.Event) {
		base := strings.TrimPrefix(ev.Type, stream.SubagentPrefix)
		if slices.Contains(coreEvents, ev.Type) || slices.Contains(coreEvents, base) {
			return
		}
		n++
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(n),
			Message:       ev.Type + " " + string(ev.Data),
			Meta:          sdk.Meta{"dawn/event": ev.Type, "dawn/data": json.RawMessage(ev.Data)},
		})
	}
}

// watch follows run's events until it ends, sending capability events to
// progress. A client that leaves (ctx ends) cancels the run, as nobody
// can rejoin a stateless call: it returns false then.
func (e *endpoint) watch(ctx context.Context, run *runner.Run, progress func(stream.Event)) bool {
	defer e.host.Subscribed()()
	src := run.Log.Subscribe(0)
	for {
		ev, err := src.Next(ctx)
		switch {
		case err == nil:
			if progress != nil {
				progress(ev)
			}
			continue
		case errors.Is(err, io.EOF):
		case ctx.Err() != nil:
			run.Cancel()
			<-run.Done()
			return false
		}
		<-run.Done()
		return true
	}
}

// result is the tool result of a finished run: its answer as text, or the
// interrupts it parked on, with structured content holding the thread id
// (to continue it), the run id, the answer and the route's state.yaml
// fields as the run left them.
func result(t *tool, path string, run *runner.Run) *sdk.CallToolResult {
	if run.Cancelled() {
		return toolError(fmt.Sprintf("%s: the run on thread %s was cancelled before it finished; its completed steps are kept", t.name, run.ThreadID))
	}
	if err := run.Err(); err != nil {
		return toolError(fmt.Sprintf("%s: the run on thread %s failed: %v", t.name, run.ThreadID, err))
	}
	var values map[string]json.RawMessage
	_ = json.Unmarshal(run.Output(), &values)
	structured := map[string]any{"thread_id": run.ThreadID, "run_id": run.ID}
	state := map[string]json.RawMessage{}
	for _, f := range t.fields {
		if v, ok := values[f.Name]; ok {
			state[f.Name] = v
		}
	}
	if len(state) > 0 {
		structured["state"] = state
	}
	if ins := run.Interrupts(); len(ins) > 0 {
		structured["interrupts"] = ins
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: parkedText(path, run.ThreadID, ins)}}, StructuredContent: structured}
	}
	answer := lastAnswer(values["messages"])
	structured["answer"] = answer
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: answer}}, StructuredContent: structured}
}

// parkedText tells the caller the run waits for a person, and how to
// answer it over Dawn's HTTP API.
func parkedText(path, threadID string, ins []capabilities.Interrupt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The run on thread %s is parked, waiting for a person to answer %d interrupt(s):\n", threadID, len(ins))
	var answers []string
	for _, in := range ins {
		fmt.Fprintf(&b, "- %s (%s): %s\n", in.ID, in.Kind, strings.TrimSpace(string(in.Detail)))
		payload := `"…"`
		if in.Kind == "tool" {
			payload = `"once"`
		}
		answers = append(answers, fmt.Sprintf(`{"interruptId":%q,"status":"resolved","payload":%s}`, in.ID, payload))
	}
	fmt.Fprintf(&b, "Resume it over HTTP: POST /threads/%s/resume with {\"route\":%q,\"resume\":[%s]}. The payload depends on the interrupt's kind: a tool approval takes \"once\", \"always\" or \"deny\".", threadID, path, strings.Join(answers, ","))
	return b.String()
}

// lastAnswer is the content of the last assistant message.
func lastAnswer(raw json.RawMessage) string {
	var msgs []thread.Message
	_ = json.Unmarshal(raw, &msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == thread.RoleAssistant && msgs[i].Content != "" {
			return msgs[i].Content
		}
	}
	return ""
}

func toolError(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}
