package langgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
	"github.com/labstack/echo/v4"
)

// This file reads a LangGraph run request: its body, stream modes,
// config and the route it names.

// lgRunBody is a LangGraph run request.
type lgRunBody struct {
	AssistantID       string          `json:"assistant_id"`
	Input             json.RawMessage `json:"input"`
	Command           json.RawMessage `json:"command"`
	Config            lgConfig        `json:"config"`
	Context           map[string]any  `json:"context"`
	Metadata          json.RawMessage `json:"metadata"`
	StreamMode        json.RawMessage `json:"stream_mode"`
	StreamSubgraphs   bool            `json:"stream_subgraphs"`
	StreamResumable   bool            `json:"stream_resumable"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	IfNotExists       string          `json:"if_not_exists"`
	OnDisconnect      string          `json:"on_disconnect"`
	OnCompletion      string          `json:"on_completion"`
	Checkpoint        struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	CheckpointID    string          `json:"checkpoint_id"`
	InterruptBefore json.RawMessage `json:"interrupt_before"`
	InterruptAfter  json.RawMessage `json:"interrupt_after"`
	Webhook         string          `json:"webhook"`
	AfterSeconds    float64         `json:"after_seconds"`
	// fields are the body's top-level fields, where the run strategies'
	// options are found (Dawn's plan_first).
	fields map[string]json.RawMessage
}

func (b *lgRunBody) UnmarshalJSON(data []byte) error {
	type plain lgRunBody
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		return err
	}
	return json.Unmarshal(data, &b.fields)
}

type lgConfig struct {
	Configurable map[string]any `json:"configurable"`
	// RecursionLimit caps the run's steps (see overrides.go).
	RecursionLimit any `json:"recursion_limit,omitempty"`
}

// lgRun is what the server keeps of a run started in the LangGraph
// dialect, for the calls that later name it (get, join, stream). It lives
// in memory: after a restart, or on another replica, a run is shown from
// the store, with the metadata, assistant, multitask strategy and kwargs
// it keeps there (runAttrs), and joined with every mode (allModes).
type lgRun struct {
	RunID, ThreadID, RouteID string
	// AssistantID is the assistant the run was started with.
	AssistantID  string
	Modes        map[string]bool
	Subgraphs    bool
	Metadata     json.RawMessage
	Multitask    string
	Input        []thread.Message
	Kwargs       map[string]any
	OnDisconnect string
	// start is what the run started from, kept only on the request that
	// started it (not in lgRuns).
	start *lgStart
	// resume is the command.resume of a run that answers the thread's
	// interrupts; nil for a run with input.
	resume json.RawMessage
}

// lgRuns remembers the latest runs started in the LangGraph dialect.
type lgRuns struct {
	mu    sync.Mutex
	byID  map[string]*lgRun
	order []string
}

// maxRemembered bounds lgRuns.
const maxRemembered = 4096

func (r *lgRuns) put(run *lgRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]*lgRun{}
	}
	r.byID[run.RunID] = run
	r.order = append(r.order, run.RunID)
	if len(r.order) > maxRemembered {
		delete(r.byID, r.order[0])
		r.order = r.order[1:]
	}
}

func (r *lgRuns) get(id string) *lgRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[id]
}

// parseModes reads stream_mode: one mode or a list; none means values.
func parseModes(raw json.RawMessage) (map[string]bool, error) {
	var list []string
	var one string
	switch {
	case isNull(raw):
		list = []string{modeValues}
	case json.Unmarshal(raw, &one) == nil:
		list = []string{one}
	case json.Unmarshal(raw, &list) != nil:
		return nil, wire.BadBody(`stream_mode must be a mode or a list of modes, like ["values","messages-tuple"]`)
	}
	modes := map[string]bool{}
	for _, m := range list {
		if !knownModes[m] {
			return nil, wire.BadBody("stream_mode " + strconv.Quote(m) + " is not a stream mode; use values, updates, messages-tuple, messages, custom, tasks, checkpoints, debug or events")
		}
		modes[m] = true
	}
	return modes, nil
}

// allModes are the modes a stream is joined with when the run's own are
// not known: every mode Dawn streams, as LangGraph joins a background run.
var allModes = map[string]bool{modeValues: true, modeUpdates: true, modeMessagesTuple: true, modeCustom: true}

// parseLGRun reads and checks a LangGraph run request for thread
// threadID.
func (s *dialect) parseLGRun(c echo.Context, threadID string) (*lgRun, runner.Request, lgRunBody, error) {
	var body lgRunBody
	if err := wire.Decode(c, &body); err != nil {
		return nil, runner.Request{}, body, err
	}
	run, req, err := s.lgRunOf(c.Request().Context(), body, threadID)
	return run, req, body, err
}

// lgRunOf checks a LangGraph run request for thread threadID and returns
// the run to remember and the runner's request.
func (s *dialect) lgRunOf(ctx context.Context, body lgRunBody, threadID string) (*lgRun, runner.Request, error) {
	fail := func(err error) (*lgRun, runner.Request, error) { return nil, runner.Request{}, err }
	if _, err := wire.NotBefore(body.AfterSeconds, time.Now()); err != nil {
		return fail(err)
	}
	if err := oneOf("multitask_strategy", body.MultitaskStrategy, "reject", "interrupt", "rollback", "enqueue"); err != nil {
		return fail(err)
	}
	if err := oneOf("if_not_exists", body.IfNotExists, "reject", "create"); err != nil {
		return fail(err)
	}
	if err := oneOf("on_disconnect", body.OnDisconnect, "cancel", "continue"); err != nil {
		return fail(err)
	}
	if err := oneOf("on_completion", body.OnCompletion, "delete", "keep"); err != nil {
		return fail(err)
	}
	if !isNull(body.Metadata) && bytes.TrimSpace(body.Metadata)[0] != '{' {
		return fail(wire.BadBody("metadata must be a JSON object"))
	}
	modes, err := parseModes(body.StreamMode)
	if err != nil {
		return fail(err)
	}
	var resume json.RawMessage
	if !isNull(body.Command) {
		if resume, err = parseCommand(body.Command, body.Input); err != nil {
			return fail(err)
		}
	}
	in, err := parseLCInput(body.Input)
	if err != nil {
		return fail(err)
	}
	found, err := s.resolveAssistant(ctx, body.AssistantID)
	var werr *wire.Error
	if errors.As(err, &werr) && werr.Kind == "assistant_not_found" {
		return fail(runAssistantNotFound(body.AssistantID))
	}
	if err != nil {
		return fail(err)
	}
	r := found.route
	overrides, err := s.runOverrides(found, body)
	if err != nil {
		return fail(err)
	}
	if err := pauses(body.InterruptBefore, body.InterruptAfter, &overrides); err != nil {
		return fail(err)
	}
	asConfigurable, _ := found.Config["configurable"].(map[string]any)
	path := withParams(r, found.path, body.Config.Configurable, body.Context, asConfigurable, found.Context)
	run := &lgRun{
		ThreadID: threadID, RouteID: r.ID, AssistantID: found.AssistantID, Modes: modes, Subgraphs: body.StreamSubgraphs,
		Metadata: body.Metadata, Multitask: body.MultitaskStrategy, Input: in.Messages, OnDisconnect: body.OnDisconnect,
		Kwargs: map[string]any{"input": json.RawMessage(orNull(body.Input)), "config": authConfig(ctx, body.Config), "context": body.Context, "stream_mode": sortedModes(modes), "subgraphs": body.StreamSubgraphs},
		resume: resume,
	}
	if resume != nil {
		run.Kwargs["command"] = map[string]json.RawMessage{"resume": resume}
	}
	if run.Multitask == "" {
		// LangGraph's default: a run sent while another runs waits for it.
		run.Multitask = "enqueue"
	}
	opts, err := s.host.RunOptions(body.fields)
	if err != nil {
		return fail(err)
	}
	req := runner.Request{ThreadID: threadID, Route: path, Messages: in.Messages, Values: in.Values, Stream: true, Options: opts, Webhook: body.Webhook, Overrides: overrides,
		// A LangGraph run may bring no new message ({"messages": []}): the
		// model goes on from the thread's.
		NoInput: true}
	if !isNull(body.Metadata) {
		req.Metadata = body.Metadata // kept with the run: its checkpoints show it
	}
	// As LangGraph does, the thread names the graph and the assistant its
	// latest run ran, so that clients find a graph's threads by metadata.
	req.ThreadMetadata = wire.MustJSON(map[string]string{"graph_id": graphName(r.ID), "assistant_id": found.AssistantID})
	req.Attrs = wire.MustJSON(runAttrs{AssistantID: run.AssistantID, Multitask: run.Multitask, Kwargs: run.Kwargs})
	return run, req, nil
}

func oneOf(field, value string, allowed ...string) error {
	if value == "" {
		return nil
	}
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return wire.BadBody(field + " must be one of " + strings.Join(allowed, ", ") + ", not " + strconv.Quote(value))
}

func sortedModes(modes map[string]bool) []string {
	var out []string
	for _, m := range []string{modeValues, modeUpdates, modeMessagesTuple, modeMessages, modeCustom, "events", "debug", "tasks", "checkpoints"} {
		if modes[m] {
			out = append(out, m)
		}
	}
	return out
}

// withParams turns a route id into a concrete path with the route's params
// taken from config.configurable or context, as LangGraph clients pass
// run parameters. A path that already is concrete, or a route with a param
// not given, is left as it is.
func withParams(r *router.Route, path string, sources ...map[string]any) string {
	if len(r.Params) == 0 || path != r.ID {
		return path
	}
	var b strings.Builder
	for _, seg := range r.Segments {
		if seg.Kind == router.Static {
			b.WriteString("/" + seg.Value)
			continue
		}
		var value string
		for _, src := range sources {
			if v, ok := src[seg.Value].(string); ok && v != "" {
				value = v
				break
			}
		}
		switch {
		case value != "":
			b.WriteString("/" + value)
		case seg.Kind == router.OptionalCatchAll:
		default:
			return path
		}
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}
