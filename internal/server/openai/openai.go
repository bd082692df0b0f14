package openai

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
	"github.com/labstack/echo/v4"
)

// ThreadHeader names the thread a request keeps its conversation on; the
// response repeats it.
const ThreadHeader = "Dawn-Thread-Id"

// Host is what the OpenAI-compatible API needs of the core: a place on
// the mux, the app, the runs it starts, the threads it deletes when a
// conversation is not kept, and the server's logger.
type Host interface {
	Add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)
	Expose(headers ...string)
	App() *app.App
	Start(ctx context.Context, req runner.Request) (*runner.Run, error)
	DeleteThread(ctx context.Context, id string) error
	// Subscribed counts a reader of a run's events; call what it returns
	// when the reader leaves.
	Subscribed() func()
	Logger() *slog.Logger
}

// endpoint serves the OpenAI-compatible API on a Host.
type endpoint struct {
	host Host
}

// Mount mounts POST /v1/chat/completions, GET /v1/models and
// GET /v1/models/{model} on h.
func Mount(h Host) {
	s := &endpoint{host: h}
	shape := wire.ShapeErrors(shapeCore)
	h.Add(http.MethodPost, "/v1/chat/completions", serve(s.completions), shape)
	h.Add(http.MethodGet, "/v1/models", serve(s.models), shape)
	h.Add(http.MethodGet, "/v1/models/*", serve(s.model), shape)
	h.Expose(ThreadHeader)
}

// modelInfo is one entry of GET /v1/models.
type modelInfo struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func newModelInfo(r *router.Route) modelInfo {
	return modelInfo{ID: modelName(r.ID), Object: "model", OwnedBy: "dawn"}
}

// modelName is the model name of route id: the id without its leading
// slash ("support/[tenant]").
func modelName(id string) string { return strings.TrimPrefix(id, "/") }

// models lists every route that runs on its own (not the subagents), in
// route id order.
func (s *endpoint) models(c echo.Context) error {
	data := []modelInfo{}
	for _, r := range s.served() {
		data = append(data, newModelInfo(r))
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data})
}

// served is every route that runs on its own (not the subagents), in
// route id order.
func (s *endpoint) served() []*router.Route {
	a := s.host.App()
	var out []*router.Route
	if a.Tree != nil {
		for _, r := range a.Tree.Routes {
			if _, ok := a.Routes[r.ID]; ok && r.Kind != router.KindSubagent {
				out = append(out, r)
			}
		}
	}
	return out
}

// hint names one of the app's models for an error's advice: `like "x"`.
func (s *endpoint) hint() string {
	if routes := s.served(); len(routes) > 0 {
		return fmt.Sprintf("like %q ", modelName(routes[0].ID))
	}
	return ""
}

// model answers GET /v1/models/{model}.
func (s *endpoint) model(c echo.Context) error {
	name, err := urlModel(c)
	if err != nil {
		return err
	}
	r, _, err := s.resolve(name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newModelInfo(r))
}

func urlModel(c echo.Context) (string, error) {
	raw := strings.TrimPrefix(c.Request().URL.EscapedPath(), "/v1/models/")
	name, err := url.PathUnescape(raw)
	if err != nil {
		return "", invalid("model", "the model in the path is not URL-encoded correctly: "+err.Error())
	}
	return name, nil
}

// resolve finds the route a model names: a route id or a concrete path,
// with or without its leading slash ("support/acme" runs
// /support/[tenant] with tenant=acme). The key is what the runner is
// asked to run.
func (s *endpoint) resolve(model string) (*router.Route, string, error) {
	if strings.Trim(model, "/ ") == "" {
		return nil, "", invalid("model", "model is required: name a route, "+s.hint()+"(GET /v1/models lists them)")
	}
	key := "/" + strings.TrimPrefix(model, "/")
	p, _, err := s.host.App().Resolve(key)
	var nf *router.NotFoundError
	switch {
	case errors.As(err, &nf) || errors.Is(err, router.ErrInvalidPath):
		return nil, "", notFound(model, "", s.hint())
	case err != nil:
		return nil, "", err
	case p.Route.Kind == router.KindSubagent:
		return nil, "", notFound(model, fmt.Sprintf(": %s is a subagent of %s and runs only as its task", p.Route.ID, p.Route.Parent), s.hint())
	}
	return p.Route, key, nil
}

// notFound is the 404 of model, which does not exist for why; hint names
// one of the app's models.
func notFound(model, why, hint string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found", Param: "model",
		Msg: fmt.Sprintf("the model %q does not exist%s; name a route id or path, %s(GET /v1/models lists them)", model, why, hint)}
}

// chatRequest is the part of a chat-completion request this endpoint
// reads. Sampling fields (temperature, max_tokens, ...) are accepted and
// ignored: the route's agent.md picks its model and settings.
type chatRequest struct {
	Model         string          `json:"model"`
	Messages      *[]chatMessage  `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	N             *int            `json:"n"`
	Tools         json.RawMessage `json:"tools"`
	Functions     json.RawMessage `json:"functions"`
	Metadata      map[string]any  `json:"metadata"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// completions handles POST /v1/chat/completions.
func (s *endpoint) completions(c echo.Context) error {
	var req chatRequest
	if err := wire.Decode(c, &req); err != nil {
		return err
	}
	_, key, err := s.resolve(req.Model)
	if err != nil {
		return err
	}
	if err := req.check(); err != nil {
		return err
	}
	threadID, kept, err := threadOf(c, &req)
	if err != nil {
		return err
	}
	msgs, err := req.input(kept)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	run, err := s.host.Start(ctx, runner.Request{ThreadID: threadID, Route: key, Messages: msgs, Stream: req.Stream})
	if err != nil {
		return err
	}
	if !kept {
		defer s.discard(run)
	} else {
		c.Response().Header().Set(ThreadHeader, threadID)
	}
	out := &completion{id: "chatcmpl-" + run.ID, model: req.Model, created: time.Now().Unix(), threadID: threadID, kept: kept}
	if req.Stream {
		return s.stream(c, run, out, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	}
	<-run.Done()
	res, err := out.result(run)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// discard deletes a stateless request's throwaway thread once its run is
// over.
func (s *endpoint) discard(run *runner.Run) {
	<-run.Done()
	if err := s.host.DeleteThread(context.Background(), run.ThreadID); err != nil {
		s.host.Logger().Warn("openai: deleting a stateless request's thread", "thread", run.ThreadID, "err", err)
	}
}

// check refuses what this endpoint cannot honour rather than ignore it.
func (r *chatRequest) check() error {
	if r.N != nil && *r.N != 1 {
		return invalid("n", fmt.Sprintf("n must be 1 (a route gives one answer per run), not %d", *r.N))
	}
	if hasItems(r.Tools) {
		return invalid("tools", "tools cannot be sent: the route's agent has its own tools, which it calls inside the server")
	}
	if hasItems(r.Functions) {
		return invalid("functions", "functions cannot be sent: the route's agent has its own tools, which it calls inside the server")
	}
	if r.Messages == nil || len(*r.Messages) == 0 {
		return invalid("messages", `messages must hold at least one user message, like [{"role":"user","content":"Hello"}]`)
	}
	return nil
}

func hasItems(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null")) && !bytes.Equal(t, []byte("[]"))
}

// threadOf is the thread a request runs on: the one the Dawn-Thread-Id
// header or metadata.thread_id names (kept), or else a new throwaway one.
func threadOf(c echo.Context, r *chatRequest) (id string, kept bool, err error) {
	param := "Dawn-Thread-Id header"
	id = c.Request().Header.Get(ThreadHeader)
	if id == "" && r.Metadata != nil {
		v, ok := r.Metadata["thread_id"]
		if ok {
			param = "metadata.thread_id"
			if id, ok = v.(string); !ok {
				return "", false, invalid(param, "metadata.thread_id must be a string, the id of the thread to keep the conversation on")
			}
		}
	}
	if id == "" {
		return "openai-" + rand.Text(), false, nil
	}
	if err := wire.CheckThreadID(id); err != nil {
		return "", false, invalid(param, param+": "+err.Error())
	}
	return id, true, nil
}

// input is the run's input. The last user message is the new input. On a
// kept thread that is all: the thread holds the conversation so far. A
// stateless request has no thread to hold it, so its earlier messages go
// with it: the system and developer messages as system messages, and the
// turns before the last user message as one system message that quotes
// them.
func (r *chatRequest) input(kept bool) ([]thread.Message, error) {
	msgs := *r.Messages
	last := -1
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		text, err := contentText(m.Content)
		if err != nil {
			return nil, invalid(fmt.Sprintf("messages[%d].content", i), fmt.Sprintf("messages[%d].content %s", i, err))
		}
		switch m.Role {
		case "user":
			// An assistant turn may have no content (only tool calls); a
			// user turn is what it says, as OpenAI requires.
			if c := bytes.TrimSpace(m.Content); len(c) == 0 || bytes.Equal(c, []byte("null")) {
				return nil, invalid(fmt.Sprintf("messages[%d].content", i), fmt.Sprintf(`messages[%d].content is required for a user message: a string, or text parts like [{"type":"text","text":"Hello"}]`, i))
			}
			last = i
		case "system", "developer", "assistant", "tool":
		default:
			return nil, invalid(fmt.Sprintf("messages[%d].role", i), fmt.Sprintf("messages[%d].role must be system, developer, user, assistant or tool, not %q", i, m.Role))
		}
		texts[i] = text
	}
	if last < 0 {
		return nil, invalid("messages", `messages must hold a user message to run, like [{"role":"user","content":"Hello"}]`)
	}
	user := thread.Message{Role: thread.RoleUser, Content: texts[last]}
	if kept {
		return []thread.Message{user}, nil
	}
	var out []thread.Message
	var earlier strings.Builder
	for i, m := range msgs[:last] {
		switch {
		case m.Role == "system" || m.Role == "developer":
			out = append(out, thread.Message{Role: thread.RoleSystem, Content: texts[i]})
		case texts[i] != "":
			fmt.Fprintf(&earlier, "\n\n%s: %s", m.Role, texts[i])
		}
	}
	if earlier.Len() > 0 {
		out = append(out, thread.Message{Role: thread.RoleSystem, Content: "The conversation so far, before the user's new message:" + earlier.String()})
	}
	return append(out, user), nil
}

// contentText is a message's content: a string, null, or text parts
// ({"type":"text","text":"…"}) joined.
func contentText(raw json.RawMessage) (string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return "", nil
	}
	var text string
	if err := json.Unmarshal(t, &text); err == nil {
		return text, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(t, &parts); err != nil {
		return "", errors.New(`must be a string or an array of text parts like [{"type":"text","text":"Hello"}]`)
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
