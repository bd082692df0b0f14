package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one Dawn server. The zero value is not usable: make one with
// New.
type Client struct {
	// BaseURL is the server's root, such as "http://127.0.0.1:3000", without
	// a trailing slash.
	BaseURL string
	// HTTP sends the requests; nil means http.DefaultClient. Streams last as
	// long as their run, so it must not have a short Timeout.
	HTTP *http.Client
	// APIKey is sent as "Authorization: Bearer <APIKey>" when not empty.
	APIKey string
}

// New returns a client of the server at baseURL, which must be an http or
// https URL with a host.
func New(baseURL string) (*Client, error) {
	base := strings.TrimRight(baseURL, "/")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not a server URL; pass one like http://127.0.0.1:8000", baseURL)
	}
	return &Client{BaseURL: base}, nil
}

// Message is one entry of a thread's conversation. A run's input carries
// user messages: Role "user" and Content. The state of a finished run also
// holds assistant messages (Content, ToolCalls or both) and tool messages
// (ToolCallID, Name and Content).
type Message struct {
	// Role is "user", "assistant", "tool" or "system".
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	// IsError marks a tool message that holds the tool's error.
	IsError bool `json:"is_error,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Input is what a run adds to its thread: messages and, optionally, values
// of state fields the route declares.
type Input struct {
	Messages []Message
	Values   map[string]any
}

// UserInput is an Input of one user message.
func UserInput(text string) Input {
	return Input{Messages: []Message{{Role: "user", Content: text}}}
}

// MarshalJSON encodes in as the API expects it:
// {"messages":[...], "field": value, ...}.
func (in Input) MarshalJSON() ([]byte, error) {
	body := make(map[string]any, len(in.Values)+1)
	for name, v := range in.Values {
		body[name] = v
	}
	msgs := in.Messages
	if msgs == nil {
		msgs = []Message{}
	}
	body["messages"] = msgs
	return json.Marshal(body)
}

// Run is a run request.
type Run struct {
	// Route is a route id or a concrete path, such as "/support/acme".
	Route string `json:"route"`
	Input Input  `json:"input"`
	// PlanFirst is the run's plan-first mode (off, auto, always, preview);
	// empty leaves it to the route.
	PlanFirst string `json:"plan_first,omitempty"`
}

// APIError is an error answer of the API:
// {"error":{"kind","message","details":{"code"}}}.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Kind is the machine-readable error kind, such as "route_not_found".
	// An answer that is not Dawn's error shape has the kind "http_error".
	Kind string
	// Message says what went wrong, for people.
	Message string
	// Code is details.code, where Dawn's clients look for the kind.
	Code string
}

func (e *APIError) Error() string { return e.Message }

// IsKind reports whether err is an *APIError of kind.
func IsKind(err error, kind string) bool {
	var e *APIError
	return errors.As(err, &e) && e.Kind == kind
}

// Thread is a thread as the API shows it.
type Thread struct {
	ID        string          `json:"thread_id"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Metadata  json.RawMessage `json:"metadata"`
	Status    string          `json:"status"`
}

// State is a thread's latest state.
type State struct {
	ThreadID string `json:"thread_id"`
	// Values are the state values by name ("messages", "todos", ...).
	Values     map[string]json.RawMessage `json:"values"`
	Checkpoint struct {
		Step  int    `json:"step"`
		RunID string `json:"run_id"`
		Route string `json:"route"`
	} `json:"checkpoint"`
	Status string `json:"status"`
	// Interrupts are the decisions a parked thread waits for.
	Interrupts []Interrupt `json:"interrupts"`
}

// Interrupt is a decision a parked run waits for: its id, kind ("tool",
// "plan", ...) and detail, whose shape depends on the kind.
type Interrupt struct {
	ID     string          `json:"interruptId"`
	Kind   string          `json:"kind"`
	Detail json.RawMessage `json:"detail"`
	// Path, for a subagent's interrupt, holds the task call ids from the
	// root run down to it.
	Path []string `json:"path,omitempty"`
}

// Answer answers one interrupt in a resume: Status "resolved" with a
// Payload, or "cancelled" without one.
type Answer struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// CreateThread creates a thread with id (empty lets the server choose one)
// and metadata (a JSON object, or nil).
func (c *Client) CreateThread(ctx context.Context, id string, metadata json.RawMessage) (Thread, error) {
	body := map[string]any{}
	if id != "" {
		body["thread_id"] = id
	}
	if metadata != nil {
		body["metadata"] = metadata
	}
	var t Thread
	err := c.doJSON(ctx, http.MethodPost, "/threads", body, &t)
	return t, err
}

// Wait runs req on threadID, waits for the run to end and returns its final
// state values as JSON. A cancelled run is an *APIError of kind
// "run_cancelled".
func (c *Client) Wait(ctx context.Context, threadID string, req Run) (json.RawMessage, error) {
	resp, err := c.send(ctx, http.MethodPost, threadPath(threadID)+"/runs/wait", req, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the runs/wait answer: %w", err)
	}
	return body, nil
}

// ErrRunCanceled is returned by WaitState when the run was cancelled
// before it finished.
var ErrRunCanceled = errors.New("dawn client: the run was cancelled before it finished")

// WaitState runs req on threadID like Wait and decodes the final state
// values into state, such as the state struct typegen writes for the
// route. A cancelled run is ErrRunCanceled.
func (c *Client) WaitState(ctx context.Context, threadID string, req Run, state any) error {
	raw, err := c.Wait(ctx, threadID, req)
	if IsKind(err, "run_cancelled") {
		return ErrRunCanceled
	}
	if err != nil {
		return err
	}
	var outcome struct {
		Cancelled bool `json:"cancelled"`
	}
	if json.Unmarshal(raw, &outcome) == nil && outcome.Cancelled {
		return ErrRunCanceled
	}
	if err := json.Unmarshal(raw, state); err != nil {
		return fmt.Errorf("decoding the state of route %s: %w", req.Route, err)
	}
	return nil
}

// Stream runs req on threadID and returns its events as they happen.
// Close the stream when done with it; closing it early does not stop the
// run.
func (c *Client) Stream(ctx context.Context, threadID string, req Run) (*Stream, error) {
	resp, err := c.send(ctx, http.MethodPost, threadPath(threadID)+"/runs/stream", req, http.Header{"Accept": {"text/event-stream"}})
	if err != nil {
		return nil, err
	}
	return newStream(threadID, resp), nil
}

// Resume answers every pending interrupt of the parked threadID (route is
// the route it parked on) and returns the events of the run that goes on.
// Answers that do not fit are an *APIError of kind "invalid_resume", and
// change nothing.
func (c *Client) Resume(ctx context.Context, threadID, route string, answers []Answer) (*Stream, error) {
	body := struct {
		Route  string   `json:"route"`
		Resume []Answer `json:"resume"`
	}{route, answers}
	resp, err := c.send(ctx, http.MethodPost, threadPath(threadID)+"/resume", body, http.Header{"Accept": {"text/event-stream"}})
	if err != nil {
		return nil, err
	}
	return newStream(threadID, resp), nil
}

// Join picks up the stream of run runID on threadID after the event with
// id lastEventID ("" or "0" for all of it), as a client that lost its
// connection does. A finished run's events are replayed from the store.
func (c *Client) Join(ctx context.Context, threadID, runID, lastEventID string) (*Stream, error) {
	h := http.Header{"Accept": {"text/event-stream"}}
	if lastEventID != "" {
		h.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.send(ctx, http.MethodGet, threadPath(threadID)+"/runs/"+url.PathEscape(runID)+"/stream", nil, h)
	if err != nil {
		return nil, err
	}
	return newStream(threadID, resp), nil
}

// Rejoin picks s's run up again after the last event s read.
func (c *Client) Rejoin(ctx context.Context, s *Stream) (*Stream, error) {
	if s.RunID == "" {
		return nil, errors.New("cannot rejoin the stream: the server did not name its run (no Dawn-Run-Id header)")
	}
	return c.Join(ctx, s.ThreadID, s.RunID, s.LastEventID())
}

// State returns threadID's latest state.
func (c *Client) State(ctx context.Context, threadID string) (State, error) {
	var s State
	err := c.doJSON(ctx, http.MethodGet, threadPath(threadID)+"/state", nil, &s)
	return s, err
}

// Cancel cancels the run in flight on threadID and waits for it to stop.
// With no run in flight it returns an *APIError of kind
// "no_run_in_flight".
func (c *Client) Cancel(ctx context.Context, threadID string) error {
	return c.doJSON(ctx, http.MethodPost, threadPath(threadID)+"/cancel", nil, nil)
}

// Plan returns threadID's plan-first plan as the API shows it.
func (c *Client) Plan(ctx context.Context, threadID string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.doJSON(ctx, http.MethodGet, threadPath(threadID)+"/plan", nil, &raw)
	return raw, err
}

func threadPath(id string) string { return "/threads/" + url.PathEscape(id) }

// doJSON sends body (nil for none) and decodes a successful answer into
// out (nil to discard it).
func (c *Client) doJSON(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, method, path, body, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding the answer of %s %s: %w", method, path, err)
	}
	return nil
}

// send sends a request and returns a 2xx answer; any other answer is an
// *APIError.
func (c *Client) send(ctx context.Context, method, path string, body any, header http.Header) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encoding the body of %s %s: %w", method, path, err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, r)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, readAPIError(resp)
	}
	return resp, nil
}

// readAPIError decodes an error answer. One that is not Dawn's shape gets
// the kind "http_error" and the status and start of the body as message.
func readAPIError(resp *http.Response) *APIError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body struct {
		Error struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
			Details struct {
				Code string `json:"code"`
			} `json:"details"`
		} `json:"error"`
	}
	e := &APIError{Status: resp.StatusCode}
	if json.Unmarshal(raw, &body) == nil && body.Error.Kind != "" {
		e.Kind, e.Message, e.Code = body.Error.Kind, body.Error.Message, body.Error.Details.Code
		if e.Message == "" {
			e.Message = fmt.Sprintf("the server answered %s (%s)", resp.Status, e.Kind)
		}
		return e
	}
	e.Kind = "http_error"
	text := strings.TrimSpace(string(raw))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	if text == "" {
		e.Message = fmt.Sprintf("the server answered %s", resp.Status)
	} else {
		e.Message = fmt.Sprintf("the server answered %s: %s", resp.Status, text)
	}
	return e
}
