package agui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/labstack/echo/v4"
)

// Host is what the AG-UI endpoint needs of the core: a place on the mux,
// the app, and the runs it starts, resumes and reads the state of.
type Host interface {
	Add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)
	App() *app.App
	Start(ctx context.Context, req runner.Request) (*runner.Run, error)
	Resume(ctx context.Context, req runner.ResumeRequest) (*runner.Run, error)
	Latest(ctx context.Context, threadID string) (store.Checkpoint, error)
	// Subscribed counts a reader of a run's events; call what it returns
	// when the reader leaves.
	Subscribed() func()
}

// endpoint serves AG-UI on a Host.
type endpoint struct {
	host Host
}

// Mount mounts POST /agui/{routeKey} on h.
func Mount(h Host) {
	s := &endpoint{host: h}
	h.Add(http.MethodPost, aguiPrefix+"*", s.aguiRun)
}

// aguiPrefix is the path the AG-UI endpoint is served under.
const aguiPrefix = "/agui/"

// aguiInput is the part of AG-UI's RunAgentInput this endpoint reads.
// tools, context, forwardedProps and parentRunId are accepted and ignored.
type aguiInput struct {
	ThreadID *string           `json:"threadId"`
	RunID    *string           `json:"runId"`
	State    json.RawMessage   `json:"state"`
	Messages []aguiMessage     `json:"messages"`
	Resume   []json.RawMessage `json:"resume"`
}

type aguiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// aguiRouteKey is the route named by the request path after /agui/: Dawn's
// URL-encoded "<routeId>#<kind>" (/agui/%2Fchat%23agent), or a route id or
// concrete path written out (/agui/support/acme).
func aguiRouteKey(c echo.Context) (string, error) {
	raw := strings.TrimPrefix(c.Request().URL.EscapedPath(), aguiPrefix)
	key, err := url.PathUnescape(raw)
	if err != nil || strings.Trim(key, "/") == "" {
		return "", wire.NewError(http.StatusNotFound, "route_not_found", fmt.Sprintf("no route in %q: POST /agui/{route}, with the route URL-encoded like /agui/%%2Fsupport%%2Facme%%23agent or written out like /agui/support/acme", c.Request().URL.EscapedPath()))
	}
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	return key, nil
}

// aguiRun handles POST /agui/{routeKey}.
func (s *endpoint) aguiRun(c echo.Context) error {
	var in aguiInput
	if err := wire.Decode(c, &in); err != nil {
		return err
	}
	key, err := aguiRouteKey(c)
	if err != nil {
		return err
	}
	threadID, runID, err := in.ids()
	if err != nil {
		return err
	}
	a := s.host.App()
	route, _, err := a.Resolve(key)
	if err != nil {
		return err
	}
	if len(in.Resume) > 0 {
		return s.aguiResume(c, &in, key, threadID, runID, route)
	}
	msg, err := in.newestUserMessage(a.Config.Limits.WithDefaults().MessageBytes)
	if err != nil {
		return err
	}
	clientState, err := in.state()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	values, err := s.threadValues(ctx, threadID, route)
	if err != nil {
		return err
	}
	input, err := aguiStateInput(route, values, clientState)
	if err != nil {
		return err
	}
	start, err := route.ApplyInput(values, input)
	if err != nil {
		msg := err.Error()
		if rest, ok := strings.CutPrefix(msg, "input."); ok {
			msg = "state." + rest
		}
		return wire.NewError(http.StatusBadRequest, "invalid_input", msg)
	}

	run, err := s.host.Start(ctx, runner.Request{ThreadID: threadID, Route: key, Messages: []thread.Message{msg}, Values: input, Stream: true})
	if err != nil {
		return err
	}
	tr := newAGUIStream(threadID, runID, run.ID, aguiFieldsOf(route, a.Config.Markers))
	return s.writeAGUI(c, run, tr, tr.start(clientState, start))
}

// ids returns the threadId and runId, which RunAgentInput requires.
func (in *aguiInput) ids() (string, string, error) {
	if in.ThreadID == nil || *in.ThreadID == "" {
		return "", "", wire.NewError(http.StatusBadRequest, "invalid_body", `threadId is required: the AG-UI RunAgentInput names the thread, like {"threadId":"t-1","runId":"r-1","messages":[{"id":"m-1","role":"user","content":"Hello"}]}`)
	}
	if in.RunID == nil || *in.RunID == "" {
		return "", "", wire.NewError(http.StatusBadRequest, "invalid_body", "runId is required: the AG-UI RunAgentInput names the run it starts")
	}
	if err := wire.CheckThreadID(*in.ThreadID); err != nil {
		return "", "", wire.NewError(http.StatusBadRequest, "invalid_thread_id", "threadId: "+err.Error())
	}
	return *in.ThreadID, *in.RunID, nil
}

// newestUserMessage is the last user message: the thread keeps the history,
// so the messages before it (which the client sends back every time) are
// not run again.
func (in *aguiInput) newestUserMessage(limit int) (thread.Message, error) {
	for i := len(in.Messages) - 1; i >= 0; i-- {
		m := in.Messages[i]
		if m.Role != thread.RoleUser {
			continue
		}
		text, err := aguiText(m.Content)
		if err != nil {
			sep := " " // "content must be …", or "content[2] is …"
			if strings.HasPrefix(err.Error(), "[") {
				sep = ""
			}
			return thread.Message{}, wire.NewError(http.StatusBadRequest, "invalid_body", fmt.Sprintf("messages[%d].content%s%s", i, sep, err))
		}
		if len(text) > limit {
			return thread.Message{}, wire.NewError(http.StatusBadRequest, "invalid_input", fmt.Sprintf("messages[%d].content is %d bytes, over the %d byte limit (limits.message_bytes in dawn.yaml)", i, len(text), limit))
		}
		return thread.Message{Role: thread.RoleUser, Content: text}, nil
	}
	return thread.Message{}, wire.NewError(http.StatusBadRequest, "invalid_body", `messages must hold a user message to run, like [{"id":"m-1","role":"user","content":"Hello"}]`)
}

// aguiText is a user message's content: a string, or text parts
// ({"type":"text","text":"…"}) joined.
func aguiText(raw json.RawMessage) (string, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("must be a string or an array of text parts like [{\"type\":\"text\",\"text\":\"Hello\"}]")
	}
	var b strings.Builder
	for i, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", fmt.Errorf("[%d] is a %q part; only text parts ({\"type\":\"text\",\"text\":\"…\"}) can be run", i, p.Type)
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// state is the client's state object; absent or null is empty.
func (in *aguiInput) state() (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if len(in.State) == 0 || string(in.State) == "null" {
		return out, nil
	}
	if err := json.Unmarshal(in.State, &out); err != nil {
		return nil, wire.NewError(http.StatusBadRequest, "invalid_body", "state must be a JSON object (the AG-UI shared state this endpoint sent), not "+jsonKindName(in.State))
	}
	return out, nil
}

func jsonKindName(raw json.RawMessage) string {
	switch t := bytes.TrimSpace(raw); {
	case len(t) == 0:
		return "nothing"
	case t[0] == '[':
		return "an array"
	case t[0] == '"':
		return "a string"
	case t[0] == 't' || t[0] == 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// threadValues is the thread's state as the next run starts from it: the
// saved values over the route's defaults (the plan seed, state.yaml
// defaults). A thread that does not exist yet has the defaults.
func (s *endpoint) threadValues(ctx context.Context, threadID string, route *capabilities.Prepared) (thread.State, error) {
	values := route.InitialState()
	cp, err := s.host.Latest(ctx, threadID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return values, nil
	case err != nil:
		return nil, err
	}
	for k, v := range cp.Values {
		values[k] = v
	}
	return values, nil
}

// aguiStateInput turns the client's state into a run's input values, by the
// rule runs follow: only fields declared in state.yaml can be set. A client
// sends back the whole state it was sent, so what is not such a field (the
// plan fields, subagents, the client's own keys) is skipped, not refused,
// and a field is set only where the client changed it. An append field can
// only grow: the client's list must start with the thread's, and what
// follows is appended.
func aguiStateInput(route *capabilities.Prepared, values thread.State, client map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	input := map[string]json.RawMessage{}
	for name, v := range client {
		f, ok := route.Field(name)
		if !ok || f.Capability != "" || jsonEqual(values[name], v) {
			continue
		}
		if f.Reducer != capabilities.Append {
			input[name] = v
			continue
		}
		var have, want []json.RawMessage
		if len(values[name]) > 0 && string(values[name]) != "null" {
			if err := json.Unmarshal(values[name], &have); err != nil {
				return nil, fmt.Errorf("state.%s: the thread's value is not a list: %w", name, err)
			}
		}
		if err := json.Unmarshal(v, &want); err != nil {
			return nil, wire.NewError(http.StatusBadRequest, "invalid_input", fmt.Sprintf("state.%s: expected a value of type array", name))
		}
		if len(want) < len(have) || !jsonEqualList(have, want[:len(have)]) {
			return nil, wire.NewError(http.StatusBadRequest, "invalid_input", fmt.Sprintf("state.%s is an append field of route %s: send the thread's list (%d items, as the last state snapshot showed it) with the new items after it", name, route.Route.ID, len(have)))
		}
		input[name] = wire.MustJSON(want[len(have):])
	}
	return input, nil
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func jsonEqualList(a, b []json.RawMessage) bool {
	for i := range a {
		if !jsonEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// testHookAGUIAbandon, when a test sets it, runs when an AG-UI client has
// left, just before its run is cancelled.
var testHookAGUIAbandon func()

// writeAGUI streams run's events translated by tr, after first. A client
// that goes away ends the run, as Dawn's AG-UI endpoint does: nobody can
// rejoin an AG-UI stream, and the thread keeps every step saved so far.
func (s *endpoint) writeAGUI(c echo.Context, run *runner.Run, tr *aguiStream, first []aguiEvent) error {
	w := c.Response()
	wire.StartSSE(c, run.ID)
	w.WriteHeader(http.StatusOK)
	ctx := c.Request().Context()
	var buf []byte
	send := func(events []aguiEvent) bool {
		buf = buf[:0]
		for _, e := range events {
			buf = append(buf, "data: "...)
			buf = append(buf, wire.MustJSON(e)...)
			buf = append(buf, "\n\n"...)
		}
		if _, err := w.Write(buf); err != nil {
			return false
		}
		w.Flush()
		return true
	}
	abandon := func() error {
		if testHookAGUIAbandon != nil {
			testHookAGUIAbandon()
		}
		// This run, by itself: by the time the cancel lands, the thread
		// may have a newer run, which is not the leaving client's.
		run.Cancel()
		<-run.Done()
		return nil
	}
	if !send(first) {
		return abandon()
	}
	defer s.host.Subscribed()()
	src := run.Log.Subscribe(0)
	for !tr.finished() {
		waitCtx, cancel := context.WithTimeout(ctx, wire.KeepAlive)
		e, err := src.Next(waitCtx)
		cancel()
		switch {
		case err == nil:
			if !send(tr.translate(e)) {
				return abandon()
			}
		case errors.Is(err, io.EOF):
			send(tr.end())
			return nil
		case ctx.Err() != nil:
			return abandon()
		case errors.Is(err, context.DeadlineExceeded):
			if err := stream.WriteComment(w, "keep-alive"); err != nil {
				return abandon()
			}
			w.Flush()
		default:
			send(tr.end())
			return nil
		}
	}
	return nil
}

// aguiResume answers a parked thread's interrupts from RunAgentInput.resume
// (each entry {"interruptId","status","payload"}, checked as strictly as
// POST /threads/:id/resume checks its body) and streams the run that goes
// on as AG-UI events.
func (s *endpoint) aguiResume(c echo.Context, in *aguiInput, key, threadID, runID string, route *capabilities.Prepared) error {
	answers := make([]capabilities.Answer, 0, len(in.Resume))
	for i, raw := range in.Resume {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var a wire.ResumeAnswer
		if err := dec.Decode(&a); err != nil {
			return wire.NewError(http.StatusBadRequest, "invalid_resume", fmt.Sprintf(`resume[%d] must be {"interruptId","status","payload"}: %v`, i, err))
		}
		answers = append(answers, a.Answer())
	}
	clientState, err := in.state()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	values, err := s.threadValues(ctx, threadID, route)
	if err != nil {
		return err
	}
	run, err := s.host.Resume(ctx, runner.ResumeRequest{ThreadID: threadID, Route: key, Answers: answers, Stream: true})
	if err != nil {
		return err
	}
	tr := newAGUIStream(threadID, runID, run.ID, aguiFieldsOf(route, s.host.App().Config.Markers))
	return s.writeAGUI(c, run, tr, tr.start(clientState, values))
}
