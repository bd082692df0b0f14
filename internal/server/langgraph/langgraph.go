package langgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// dialect serves the LangGraph dialect on a wire.Host. known remembers
// the runs it started, for the calls that later name them.
type dialect struct {
	host  wire.Host
	known lgRuns
	// defaults are LANGGRAPH_CONFIG's configs of default assistants.
	defaults envDefaults
}

// Mount mounts the LangGraph dialect on h: its own endpoints, and its
// handling of the requests to Dawn's endpoints that are in the dialect
// (see byDialect). The thread and state reads (GET /threads/:id and
// /threads/:id/state) are in the shape both dialects read, built here.
func Mount(h wire.Host) {
	s := &dialect{host: h, defaults: readEnvDefaults(h)}
	// A LangGraph client in a browser reads the run's id from
	// Content-Location (useStream keeps it to rejoin the run), where to
	// rejoin from Location, and the next page of assistants from
	// X-Pagination-Next.
	h.Expose("Content-Location", "Location", "X-Pagination-Next")
	h.Intercept(http.MethodPost, "/threads", s.lgCreateThread)
	h.Intercept(http.MethodGet, "/threads/:id/runs", runsDialect(s.lgListRuns))
	h.Intercept(http.MethodPost, "/threads/:id/runs/wait", byDialect(s.lgRunWait))
	h.Intercept(http.MethodPost, "/threads/:id/runs/stream", byDialect(s.lgRunStream))
	h.Intercept(http.MethodGet, "/threads/:id/runs/:run/stream", joinDialect(s.lgJoinStream))
	h.Add(http.MethodGet, "/threads/:id", s.getThread)
	h.Add(http.MethodGet, "/threads/:id/state", s.lgGetState)
	h.Add(http.MethodGet, "/threads/:id/history", s.getHistory)
	s.routeLangGraph(h)
	s.routeCrons(h)
	h.StartCrons(s)
	s.routeStore(h)
}

// routeLangGraph adds the endpoints only the LangGraph dialect has. markLG
// gives their errors LangGraph's "detail".
func (s *dialect) routeLangGraph(h wire.Mux) {
	h.Add(http.MethodPost, "/assistants", s.createAssistant, markLG)
	h.Add(http.MethodPost, "/assistants/search", s.searchAssistants, markLG)
	h.Add(http.MethodPost, "/assistants/count", s.countAssistants, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant", s.getAssistant, markLG)
	h.Add(http.MethodPatch, "/assistants/:assistant", s.updateAssistant, markLG)
	h.Add(http.MethodDelete, "/assistants/:assistant", s.deleteAssistant, markLG)
	h.Add(http.MethodPost, "/assistants/:assistant/versions", s.assistantVersions, markLG)
	h.Add(http.MethodPost, "/assistants/:assistant/latest", s.setLatestAssistant, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant/schemas", s.assistantSchemas, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant/graph", s.assistantGraph, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant/subgraphs", s.assistantSubgraphs, markLG)
	h.Add(http.MethodGet, "/assistants/:assistant/subgraphs/:namespace", s.assistantSubgraphs, markLG)
	h.Add(http.MethodGet, "/info", s.serverInfo, markLG)
	h.Add(http.MethodGet, "/ok", serverOK, markLG)

	h.Add(http.MethodPost, "/threads/search", s.searchThreads, markLG)
	h.Add(http.MethodPost, "/threads/count", s.countThreads, markLG)
	h.Add(http.MethodGet, "/threads/:id/state/:checkpoint", s.getCheckpoint, markLG)
	h.Add(http.MethodPost, "/threads/:id/state/checkpoint", s.postCheckpoint, markLG)
	h.Add(http.MethodPost, "/threads/:id/history", s.threadHistory, markLG)
	h.Add(http.MethodGet, "/threads/:id/stream", s.lgThreadStream, markLG)

	h.Add(http.MethodPost, "/threads/:id/runs", s.lgCreateRun, markLG, wire.NotFoundAs(func(c echo.Context) error { return noThread(c.Param("id")) }))
	h.Add(http.MethodGet, "/threads/:id/runs/:run", s.lgGetRun, markLG)
	h.Add(http.MethodGet, "/threads/:id/runs/:run/join", s.lgJoinRun, markLG)
	h.Add(http.MethodPost, "/threads/:id/runs/:run/cancel", s.lgCancelRun, markLG)

	// What Dawn does not do answers with why, not a bare 404 or 405.
	h.Add(http.MethodPatch, "/threads/:id", s.patchThread, markLG)
	h.Add(http.MethodPost, "/threads/:id/copy", s.copyThread, markLG)
	h.Add(http.MethodPost, "/threads/:id/state", s.updateState, markLG)
	addUnsupported(h, http.MethodPatch, "/threads/:id/state", "checkpoint metadata cannot be changed")
	addUnsupported(h, http.MethodDelete, "/threads/:id/runs/:run", "a run cannot be deleted on its own; delete its thread")
	h.Add(http.MethodPost, "/runs/batch", s.batchRuns, markLG)

	h.Add(http.MethodPost, "/runs", s.lgStateless(statelessBackground), markLG)
	h.Add(http.MethodPost, "/runs/stream", s.lgStateless(statelessStream), markLG)
	h.Add(http.MethodPost, "/runs/wait", s.lgStateless(statelessWait), markLG)
	h.Add(http.MethodGet, "/runs/:run/stream", s.joinRunByID, markLG)
}

// lgError is Dawn's error body with the message repeated as "detail",
// where LangGraph's clients read the Agent Server's {"detail": …}.
type lgError struct {
	wire.ErrorBody
	Detail string `json:"detail,omitempty"`
}

// markLG marks the requests of a handler as LangGraph-dialect ones: their
// errors carry LangGraph's "detail" too.
var markLG = wire.ShapeErrors(func(b wire.ErrorBody) any {
	return lgError{ErrorBody: b, Detail: b.Error.Message}
})

// unsupported answers a LangGraph call Dawn does not serve with 405 and
// why (405, not 501: the SDK retries a 5xx).
func unsupported(why string) echo.HandlerFunc {
	return func(c echo.Context) error {
		return wire.NewError(http.StatusMethodNotAllowed, "not_supported", c.Request().Method+" "+c.Path()+" is not supported: "+why)
	}
}

// addUnsupported mounts an unsupported call on a thread: its answer is
// the same whether the thread is the caller's, another user's or none
// (wire.NotFoundAs), so that it tells nothing of whose the thread is.
func addUnsupported(h wire.Mux, method, path, why string) {
	u := unsupported(why)
	h.Add(method, path, u, markLG, wire.NotFoundAs(u))
}

// byDialect serves a run request with lg when its body names assistant_id
// and no route (the LangGraph dialect), and with Dawn's handler otherwise.
func byDialect(lg echo.HandlerFunc) echo.MiddlewareFunc {
	return func(dawn echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			data, err := wire.PeekBody(c)
			if err != nil {
				return err
			}
			var names struct {
				Route       *string `json:"route"`
				AssistantID *string `json:"assistant_id"`
			}
			if json.Unmarshal(wire.TrimBOM(data), &names) == nil && names.AssistantID != nil && names.Route == nil {
				return markLG(lg)(c)
			}
			return dawn(c)
		}
	}
}

// joinDialect serves GET /threads/:id/runs/:run/stream: the LangGraph
// SDK's joinStream always sends cancel_on_disconnect, and its reconnection
// follows the Location a LangGraph stream names, which carries
// stream_mode; anything else is Dawn's rejoin.
func joinDialect(lg echo.HandlerFunc) echo.MiddlewareFunc {
	return func(dawn echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			q := c.QueryParams()
			if q.Has("cancel_on_disconnect") || q.Has("stream_mode") {
				return markLG(lg)(c)
			}
			return dawn(c)
		}
	}
}

// runsDialect serves GET /threads/:id/runs: the LangGraph SDK always sends
// limit and offset; Dawn's clients send no query.
func runsDialect(lg echo.HandlerFunc) echo.MiddlewareFunc {
	return func(dawn echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			q := c.QueryParams()
			if q.Has("limit") || q.Has("offset") || q.Has("status") || q.Has("select") {
				return markLG(lg)(c)
			}
			return dawn(c)
		}
	}
}

// lgCreateThread serves POST /threads: Dawn's, plus LangGraph's if_exists
// "do_nothing", which returns the existing thread.
func (s *dialect) lgCreateThread(dawn echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		data, err := wire.PeekBody(c)
		if err != nil {
			return err
		}
		var body struct {
			ThreadID   string          `json:"thread_id"`
			IfExists   string          `json:"if_exists"`
			Supersteps json.RawMessage `json:"supersteps"`
			GraphID    string          `json:"graph_id"`
			TTL        json.RawMessage `json:"ttl"`
			Metadata   json.RawMessage `json:"metadata"`
		}
		_ = json.Unmarshal(data, &body)
		if _, err := wire.ThreadTTL(body.TTL); err != nil { // Dawn's handler keeps it
			return err
		}
		switch {
		case !isNull(body.Supersteps):
			if body.GraphID == "" { // the SDK sends graphId as metadata.graph_id
				var meta struct {
					GraphID string `json:"graph_id"`
				}
				_ = json.Unmarshal(body.Metadata, &meta) // Dawn's handler answers a bad metadata
				body.GraphID = meta.GraphID
			}
			return s.createWithSupersteps(c, dawn, body.Supersteps, body.GraphID)
		case body.IfExists != "" && body.IfExists != "raise" && body.IfExists != "do_nothing":
			return wire.BadBody(`if_exists must be "raise" or "do_nothing", not ` + strconv.Quote(body.IfExists))
		}
		if body.IfExists == "do_nothing" && body.ThreadID != "" {
			if t, err := s.host.GetThread(c.Request().Context(), body.ThreadID); err == nil {
				return c.JSON(http.StatusOK, t)
			}
		}
		return dawn(c)
	}
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

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

// startLG starts a LangGraph run on its thread: it applies if_not_exists,
// noThread is the 404 of a run request on a thread that does not exist
// and is not to be created.
func noThread(id string) error {
	return wire.NewError(http.StatusNotFound, "thread_not_found", "thread "+id+" does not exist: create it with POST /threads, or pass if_not_exists: \"create\"")
}

// startLG starts a LangGraph run on its thread: it applies if_not_exists,
// the checkpoint to continue from, multitask_strategy and after_seconds,
// then starts the run, or queues it, and remembers it. It returns the run
// started here, or else the queued run (pending).
func (s *dialect) startLG(ctx context.Context, run *lgRun, req runner.Request, body lgRunBody) (*runner.Run, store.Run, error) {
	fail := func(err error) (*runner.Run, store.Run, error) { return nil, store.Run{}, err }
	if err := wire.CheckThreadID(run.ThreadID); err != nil {
		return fail(err)
	}
	_, err := s.host.GetThread(ctx, run.ThreadID)
	if errors.Is(err, store.ErrNotFound) && run.resume != nil && body.IfNotExists == "create" {
		// A thread yet to be created has no interrupt to answer: it is
		// not created.
		return fail(wire.NewError(http.StatusConflict, "no_interrupt_pending", "thread "+run.ThreadID+" does not exist, so no interrupt is pending on it: command.resume answers the interrupts of a thread whose run parked"))
	}
	if errors.Is(err, store.ErrNotFound) {
		if body.IfNotExists != "create" {
			return fail(noThread(run.ThreadID))
		}
	} else if err != nil {
		return fail(err)
	}
	if err := s.commandUpdate(ctx, run, &req, body); err != nil {
		return fail(err)
	}
	if err := s.inputByID(ctx, run, &req); err != nil {
		return fail(err)
	}
	if err := s.continuePaused(ctx, run, body); err != nil {
		return fail(err)
	}
	if run.resume != nil {
		// A parked thread has no run in flight to cancel.
		started, err := s.startResume(ctx, run, req)
		if err != nil {
			return fail(err)
		}
		return s.remember(run, started), store.Run{}, nil
	}
	at, err := wire.NotBefore(body.AfterSeconds, time.Now())
	if err != nil {
		return fail(err)
	}
	started, queued, err := s.admitLG(ctx, run, req, at)
	switch {
	case err != nil && req.Checkpoint != "" && errors.Is(err, store.ErrNotFound):
		return fail(updateError(run.ThreadID, req.Checkpoint, err))
	case err != nil:
		return fail(lgPending(err))
	case started == nil:
		// Read when it starts: the thread moves on meanwhile.
		run.start = nil
		run.RunID = queued.ID
		kept := *run
		kept.resume = nil
		s.known.put(&kept)
		return nil, queued, nil
	}
	if req.Checkpoint != "" {
		// The run's messages go to the branch its start made.
		if cp, err := s.host.Latest(ctx, run.ThreadID); err == nil {
			run.start.Names.branch = cp.Branch
		}
	}
	return s.remember(run, started), store.Run{}, nil
}

// admitLG starts run, or queues it, as its multitask_strategy says.
// interrupt and rollback clear the thread first, then read what the run
// starts from (after the clearing, which may roll the thread back), then
// start it; when another request that interrupts the same thread started
// its run in between, that run is cleared in turn, as interrupt says,
// rather than this one refused with run_in_flight.
func (s *dialect) admitLG(ctx context.Context, run *lgRun, req runner.Request, at time.Time) (*runner.Run, store.Run, error) {
	strategy := run.Multitask
	clearing := strategy == "interrupt" || strategy == "rollback"
	for round := 1; ; round++ {
		if clearing {
			if err := s.host.ClearThread(ctx, run.ThreadID, strategy == "rollback"); err != nil {
				return nil, store.Run{}, err
			}
		}
		// What the run starts from, read before it starts: after, its
		// first step may already be saved.
		run.start = s.threadStart(ctx, run.ThreadID, run.RouteID, req)
		admitAs := strategy
		if clearing {
			admitAs = "reject"
		}
		started, queued, err := s.host.Admit(ctx, req, admitAs, at)
		if !clearing || !wire.Busy(err) || round == wire.MaxClears {
			return started, queued, err
		}
	}
}

// awaitLG waits until queued run r has started and returns it live when
// it runs here, or nil when another replica has it or it has ended; now
// is how the store has it then.
func (s *dialect) awaitLG(ctx context.Context, r store.Run) (live *runner.Run, now store.Run, err error) {
	now, err = s.host.AwaitStart(ctx, r.ID)
	if err != nil {
		return nil, now, err
	}
	if run := s.host.Active(ctx, r.ThreadID); run != nil && run.ID == r.ID {
		return run, now, nil
	}
	return nil, now, nil
}

// remember keeps what the calls that later name a started run need.
func (s *dialect) remember(run *lgRun, started *runner.Run) *runner.Run {
	run.RunID = started.ID
	kept := *run
	kept.start, kept.resume = nil, nil
	s.known.put(&kept)
	return started
}

// lgStart is what a run starts from: the thread's messages with the run's
// input, and its state fields.
type lgStart struct {
	Prefix []thread.Message
	Fields thread.State
	Names  messageNames
	// Step is the thread's highest step then, which the run's first
	// follows; From the checkpoint the run starts from ("" for none).
	Step int
	From string
}

// threadStart reads what a run of req on a thread would start from now:
// the route's initial state under the thread's values and the input's.
func (s *dialect) threadStart(ctx context.Context, threadID, routeID string, req runner.Request) *lgStart {
	start := &lgStart{Fields: thread.State{}}
	if p, ok := s.host.App().Routes[routeID]; ok {
		start.Fields = p.InitialState()
	}
	cp, err := s.host.Latest(ctx, threadID)
	start.Step, start.From = cp.Step, cmpOr(req.Checkpoint, cp.ID)
	if req.Checkpoint != "" && req.Checkpoint != cp.ID {
		cp, err = s.host.CheckpointAt(ctx, threadID, req.Checkpoint)
	}
	if err == nil {
		start.Prefix, start.Names = cp.Messages, namesOf(cp)
		for k, v := range cp.Values {
			start.Fields[k] = v
		}
	}
	for k, v := range req.Values {
		start.Fields[k] = v
	}
	start.Prefix = append(start.Prefix[:len(start.Prefix):len(start.Prefix)], req.Messages...)
	return start
}

// runLocation is the path of a run, which a LangGraph client reads from
// Content-Location to learn the run's id (useStream keeps it to rejoin).
func runLocation(threadID, runID string) string {
	return "/threads/" + threadID + "/runs/" + runID
}

func setRunHeaders(c echo.Context, threadID, runID string) {
	h := c.Response().Header()
	h.Set("Content-Location", runLocation(threadID, runID))
	h.Set("Dawn-Run-Id", runID)
}

// lgRunStream is POST /threads/:id/runs/stream in the LangGraph dialect.
func (s *dialect) lgRunStream(c echo.Context) error {
	run, req, body, err := s.parseLGRun(c, c.Param("id"))
	if err != nil {
		return err
	}
	started, queued, err := s.startLG(c.Request().Context(), run, req, body)
	if err != nil {
		return err
	}
	if started == nil {
		return s.streamQueued(c, run, queued)
	}
	return s.streamLG(c, run, started, fromStart)
}

// streamQueued streams a queued run once it has started: live when it
// runs here, else from the store.
func (s *dialect) streamQueued(c echo.Context, run *lgRun, queued store.Run) error {
	live, now, err := s.awaitLG(c.Request().Context(), queued)
	switch {
	case err != nil:
		if c.Request().Context().Err() != nil {
			return nil // the client left; the run stays queued
		}
		return err
	case live != nil:
		return s.streamLG(c, run, live, fromStart)
	}
	view := *run
	view.OnDisconnect = ""
	return s.lgStoredStream(c, &view, now, fromStart)
}

// streamLG streams a live run in the LangGraph dialect from after the
// given event id (0: from its start).
func (s *dialect) streamLG(c echo.Context, run *lgRun, live *runner.Run, after int64) error {
	var prefix []thread.Message
	var fields thread.State
	var names messageNames
	var origin runOrigin
	if run.start != nil {
		prefix, fields, names = run.start.Prefix, run.start.Fields, run.start.Names
		origin = runOrigin{First: run.start.Step + 1, From: run.start.From}
	} else {
		ctx := c.Request().Context()
		prefix = s.runStart(ctx, run.ThreadID, run.RunID, run.Input, nil, live.Log.Since(0))
		names = s.threadNames(ctx, run.ThreadID)
		origin = s.runOrigin(ctx, run.ThreadID, run.RunID, true)
		r, _ := s.host.GetRun(ctx, run.RunID) // a run without a record starts from the thread's fields alone
		r.ThreadID, r.Route = run.ThreadID, run.RouteID
		fields = s.startFields(ctx, r, origin.From)
	}
	tr := newTranslator(s.host.App(), lgRunView{
		ThreadID: run.ThreadID, RunID: run.RunID, RouteID: run.RouteID, AssistantID: run.AssistantID, Modes: run.Modes, Subgraphs: run.Subgraphs,
		Input: len(run.Input), Prefix: prefix, Fields: fields, Saved: s.savedState(c.Request().Context(), run.ThreadID, run.RunID), Names: names,
		Origin: origin, Metadata: run.Metadata,
	})
	var gone func()
	if run.OnDisconnect == "cancel" {
		gone = func() { live.Cancel() } // this run, never a newer one of the thread
	}
	return s.writeLG(c, live.Log.Subscribe(0), tr, run.ThreadID, run.RunID, after, gone)
}

// runStart returns the messages a run started from (its fields are
// startFields'). For a run that has saved a step (or finished, final
// holding its last messages), the messages up to its input are read back:
// a run adds only the model's, the tools' and the harness's messages after
// its input; a run that went on with a parked run's held-back calls (it
// has no input) adds their results and what follows. events are the run's
// events so far, which tell the one from the other. Before its first step
// the thread's messages and the input make them up.
func (s *dialect) runStart(ctx context.Context, threadID, runID string, input []thread.Message, final []thread.Message, events []stream.Event) []thread.Message {
	if final != nil {
		return beforeRun(final, events)
	}
	cp, err := s.host.Latest(ctx, threadID)
	if err != nil {
		return input
	}
	if cp.RunID == runID {
		return beforeRun(cp.Messages, events)
	}
	return append(cp.Messages[:len(cp.Messages):len(cp.Messages)], input...)
}

// beforeRun returns the messages of msgs, which a run with the given events
// saved, that were there before the run: up to its input, or, for a run
// that went on with held-back calls, up to the first result of those.
func beforeRun(msgs []thread.Message, events []stream.Event) []thread.Message {
	prefix := upToInput(msgs)
	resumed := resumedCalls(events)
	if len(resumed) == 0 {
		return prefix
	}
	for i := len(prefix); i < len(msgs); i++ {
		if msgs[i].Role == thread.RoleTool && resumed[msgs[i].ToolCallID] {
			return msgs[:i]
		}
	}
	return prefix
}

// resumedCalls returns the ids of the held-back calls a run went on with:
// the results it streams before any call of its own.
func resumedCalls(events []stream.Event) map[string]bool {
	ids := map[string]bool{}
	for _, e := range events {
		if e.Type == stream.TypeToolCall {
			break
		}
		if e.Type == stream.TypeToolResult {
			var r struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(e.Data, &r)
			ids[r.ID] = true
		}
	}
	return ids
}

// upToInput returns msgs up to the last message a user sent.
func upToInput(msgs []thread.Message) []thread.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == thread.RoleUser && !isNote(msgs[i]) { // a capability's note carries metadata; a person's input cannot
			return msgs[:i+1]
		}
	}
	return msgs
}

// writeLG writes a run's stream in the LangGraph dialect: a metadata part,
// then the translation of each event. Events up to after were seen by the
// client: they only bring the translator up to date. The last part of each
// event carries the event's id, so Last-Event-ID resumes after it. gone,
// when set, is called if the client leaves before the end.
func (s *dialect) writeLG(c echo.Context, src wire.EventSource, tr *lgTranslator, threadID, runID string, after int64, gone func()) error {
	w := c.Response()
	h := w.Header()
	wire.StartSSE(c, "")
	// Where the SDK reconnects to when the connection drops.
	rejoin := url.Values{"stream_mode": sortedModes(tr.modes)}
	if tr.subgraphs {
		rejoin.Set("stream_subgraphs", "true")
	}
	h.Set("Location", runLocation(threadID, runID)+"/stream?"+rejoin.Encode())
	setRunHeaders(c, threadID, runID)
	w.WriteHeader(http.StatusOK)
	buf := stream.AppendSSE(nil, stream.Event{Type: "metadata", Data: wire.MustJSON(map[string]any{"run_id": runID, "attempt": 1})})
	// The opening parts bring the translator up to date even when the
	// client saw them already: they go out only from the start.
	opening := tr.begin()
	if after == fromStart {
		for _, p := range opening {
			buf = stream.AppendSSE(buf, p)
		}
	}
	if _, err := w.Write(buf); err != nil {
		return nil
	}
	w.Flush()
	ctx := c.Request().Context()
	for {
		waitCtx, cancel := context.WithTimeout(ctx, wire.KeepAlive)
		e, err := src.Next(waitCtx)
		cancel()
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		case ctx.Err() != nil:
			if gone != nil {
				gone()
			}
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			if err := stream.WriteComment(w, "keep-alive"); err != nil {
				return nil
			}
			w.Flush()
			continue
		default:
			return nil
		}
		// The parts depend on the events alone, so the parts of the events
		// up to after are the ones the client saw.
		parts := tr.feed(e)
		if e.ID <= after {
			continue
		}
		if len(parts) > 0 {
			parts[len(parts)-1].ID = e.ID
			buf = buf[:0]
			for _, p := range parts {
				buf = stream.AppendSSE(buf, p)
			}
			if _, err := w.Write(buf); err != nil {
				if gone != nil {
					gone()
				}
				return nil
			}
			w.Flush()
		}
		if e.Type == stream.TypeDone {
			return nil
		}
	}
}

// lgJoinStream is GET /threads/:id/runs/:run/stream in the LangGraph
// dialect: the run's stream from after Last-Event-ID ("-1" or none: from
// its start), live while it runs and replayed from the store after.
func (s *dialect) lgJoinStream(c echo.Context) error {
	ctx := c.Request().Context()
	threadID, runID := c.Param("id"), c.Param("run")
	after, err := lgLastEventID(c)
	if err != nil {
		return err
	}
	known := s.known.get(runID)
	view := &lgRun{ThreadID: threadID, RunID: runID, Modes: allModes}
	if known != nil {
		copied := *known
		view = &copied
	}
	if c.QueryParams().Has("stream_mode") {
		modes, err := parseModes(queryList(c.QueryParams()["stream_mode"]))
		if err != nil {
			return err
		}
		view.Modes = modes
	}
	if q := c.QueryParam("stream_subgraphs"); q != "" {
		view.Subgraphs = q == "true" || q == "1"
	}
	view.OnDisconnect = ""
	if q := c.QueryParam("cancel_on_disconnect"); q == "1" || q == "true" {
		view.OnDisconnect = "cancel"
	}
	if live := s.host.Active(c.Request().Context(), threadID); live != nil && live.ID == runID {
		view.RouteID = live.RouteID
		return s.streamLG(c, view, live, after)
	}
	r, err := s.host.GetRun(ctx, runID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.ThreadID != threadID) {
		return wire.NewError(http.StatusNotFound, "run_not_found", "thread "+threadID+" has no run "+runID)
	}
	if err != nil {
		return err
	}
	if r.Status == store.RunPending {
		live, now, err := s.awaitLG(ctx, r)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil // the client left; the run stays queued
			}
			return err
		case live != nil:
			view.RouteID = live.RouteID
			return s.streamLG(c, view, live, after)
		}
		r = now
	}
	return s.lgStoredStream(c, view, r, after)
}

// lgStoredStream streams run r, which does not run here, in the LangGraph
// dialect from the store, a page at a time: replayed when it ended, and
// followed to its end as its events commit when it runs on another
// replica.
func (s *dialect) lgStoredStream(c echo.Context, view *lgRun, r store.Run, after int64) error {
	ctx := c.Request().Context()
	threadID, runID := r.ThreadID, r.ID
	head, final, err := s.lgReplayHead(ctx, runID)
	if err != nil {
		return err
	}
	prefix := s.runStart(ctx, threadID, runID, view.Input, final, head)
	prefix = slices.Clone(prefix) // not the final messages behind it, the answer among them
	origin := s.runOrigin(ctx, threadID, runID, r.Status == store.RunRunning || r.Status == store.RunPending)
	fields := s.startFields(ctx, r, origin.From)
	info := runInfoOf(r)
	tr := newTranslator(s.host.App(), lgRunView{
		ThreadID: threadID, RunID: runID, RouteID: r.Route, AssistantID: cmpOr(view.AssistantID, info.assistant), Metadata: r.Metadata, Modes: view.Modes, Subgraphs: view.Subgraphs,
		Input: len(view.Input), Prefix: prefix, Fields: fields, Saved: s.savedState(ctx, threadID, runID), Names: s.threadNames(ctx, threadID),
		Origin: origin,
	})
	// Read from the first event: the translator rebuilds the run's parts
	// from all of them, and the follower reads what commits from now on
	// too, to the run's done event.
	f := s.host.Follow(runID, 0)
	defer f.Close()
	return s.writeLG(c, f, tr, threadID, runID, after, nil)
}

// startFields are the state fields stored run r started with, as its
// live stream began: the route's initial ones, under those of the
// checkpoint it started from (from; "" for a thread's first step; without
// the interrupts it waited on), under those its input set, which it keeps
// in its kwargs.
func (s *dialect) startFields(ctx context.Context, r store.Run, from string) thread.State {
	fields := thread.State{}
	if p, ok := s.host.App().Routes[r.Route]; ok {
		fields = p.InitialState()
	}
	if from != "" {
		if cp, err := s.host.CheckpointAt(ctx, r.ThreadID, from); err == nil {
			maps.Copy(fields, cp.Values)
			delete(fields, capabilities.InterruptsKey) // a run that starts there answers them
		}
	}
	var kept struct {
		Kwargs struct {
			Input json.RawMessage `json:"input"`
		} `json:"kwargs"`
	}
	if len(r.Attrs) > 0 && json.Unmarshal(r.Attrs, &kept) == nil {
		if in, err := parseLCInput(kept.Kwargs.Input); err == nil {
			maps.Copy(fields, in.Values)
		}
	}
	return fields
}

// lgReplayHead reads the committed log of run runID once, a page at a
// time, for what a replay's start needs (see runStart): the events before
// its first tool call, and its final messages when it has a done event.
func (s *dialect) lgReplayHead(ctx context.Context, runID string) (head []stream.Event, final []thread.Message, err error) {
	calls := false
	for after := int64(0); ; {
		page, err := s.host.EventsPage(ctx, runID, after, lgHeadPage)
		if err != nil || len(page) == 0 {
			return head, final, err
		}
		for _, e := range page {
			calls = calls || e.Type == stream.TypeToolCall
			if !calls && e.Type == stream.TypeToolResult {
				head = append(head, e)
			}
			if e.Type == stream.TypeDone {
				var d struct {
					Output json.RawMessage `json:"output"`
				}
				_ = json.Unmarshal(e.Data, &d)
				final, _, _ = splitValues(d.Output)
			}
		}
		after = page[len(page)-1].ID
	}
}

// lgHeadPage is how many events lgReplayHead reads at once.
const lgHeadPage = 128

// queryList reads a list from a query (stream_mode, select): repeated,
// one value, or a JSON list (as the SDK sends a list).
func queryList(values []string) json.RawMessage {
	if len(values) == 1 && strings.HasPrefix(strings.TrimSpace(values[0]), "[") {
		return json.RawMessage(values[0])
	}
	return wire.MustJSON(values)
}

// lgThreadStream is GET /threads/:id/stream: the stream of the run in
// flight on the thread, if any.
func (s *dialect) lgThreadStream(c echo.Context) error {
	threadID := c.Param("id")
	live := s.host.Active(c.Request().Context(), threadID)
	if live == nil {
		if _, err := s.host.GetThread(c.Request().Context(), threadID); err != nil {
			return err
		}
		if remote, ok := s.host.RemoteRun(c.Request().Context(), threadID); ok {
			return s.lgRemoteThreadStream(c, remote)
		}
		c.Response().Header().Set(echo.HeaderContentType, "text/event-stream")
		c.Response().WriteHeader(http.StatusOK)
		return nil
	}
	view := &lgRun{ThreadID: threadID, RunID: live.ID, RouteID: live.RouteID, Modes: allModes}
	if known := s.known.get(live.ID); known != nil {
		view.Modes, view.Subgraphs, view.Input = known.Modes, known.Subgraphs, known.Input
	}
	after, err := lgLastEventID(c)
	if err != nil {
		return err
	}
	return s.streamLG(c, view, live, after)
}

// lgRemoteThreadStream is lgThreadStream for run r, in flight on another
// replica of a shared store: followed from the store to its end.
func (s *dialect) lgRemoteThreadStream(c echo.Context, r store.Run) error {
	view := &lgRun{ThreadID: r.ThreadID, RunID: r.ID, RouteID: r.Route, Modes: allModes}
	if known := s.known.get(r.ID); known != nil {
		view.Modes, view.Subgraphs, view.Input = known.Modes, known.Subgraphs, known.Input
	}
	after, err := lgLastEventID(c)
	if err != nil {
		return err
	}
	return s.lgStoredStream(c, view, r, after)
}

// lgRunWait is POST /threads/:id/runs/wait in the LangGraph dialect: the
// run's final state values, or {"__error__": ...} for a failed run, which
// the SDK raises.
func (s *dialect) lgRunWait(c echo.Context) error {
	run, req, body, err := s.parseLGRun(c, c.Param("id"))
	if err != nil {
		return err
	}
	req.Stream = false
	started, queued, err := s.startLG(c.Request().Context(), run, req, body)
	if err != nil {
		return err
	}
	if started == nil {
		setRunHeaders(c, queued.ThreadID, queued.ID)
		return s.joinResult(c, queued)
	}
	return s.waitLG(c, run.ThreadID, started)
}

func (s *dialect) waitLG(c echo.Context, threadID string, run *runner.Run) error {
	setRunHeaders(c, threadID, run.ID)
	select {
	case <-run.Done():
	case <-c.Request().Context().Done():
		return nil // the client left; the run goes on
	}
	return s.answerResult(c, threadID, run.Output())
}

// answerResult answers with a finished run's output as runs/wait and join
// give it: the state values, {"__error__": ...} for a failed run (the SDK
// raises it), and the thread's state for a cancelled one.
func (s *dialect) answerResult(c echo.Context, threadID string, output json.RawMessage) error {
	var ended struct {
		Error     string `json:"error"`
		ErrorName string `json:"error_name"`
		Cancelled bool   `json:"cancelled"`
	}
	if _, _, ok := splitValues(output); !ok && json.Unmarshal(output, &ended) == nil {
		switch {
		case ended.Error != "":
			output = wire.MustJSON(map[string]any{"__error__": map[string]string{"error": errorNameOr(ended.ErrorName), "message": ended.Error}})
			return c.JSONBlob(http.StatusOK, output)
		case ended.Cancelled:
			cp, err := s.host.Latest(c.Request().Context(), threadID)
			if err != nil {
				return err
			}
			return c.JSONBlob(http.StatusOK, lcCheckpointValues(cp))
		}
	}
	return c.JSONBlob(http.StatusOK, withInterrupts(stateOutput(s.outputNames(c.Request().Context(), threadID), output)))
}

// lgRunObject is the LangGraph Run object, with Dawn's route and error
// beside it.
type lgRunObject struct {
	RunID             string          `json:"run_id"`
	ThreadID          string          `json:"thread_id"`
	AssistantID       string          `json:"assistant_id"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	Status            string          `json:"status"`
	Metadata          json.RawMessage `json:"metadata"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	Kwargs            map[string]any  `json:"kwargs"`
	Route             string          `json:"route"`
	Error             string          `json:"error,omitempty"`
}

// runAttrs is what a LangGraph run keeps with it in the store
// (store.Run.Attrs), for its Run object on any server.
type runAttrs struct {
	AssistantID string         `json:"assistant_id"`
	Multitask   string         `json:"multitask_strategy"`
	Kwargs      map[string]any `json:"kwargs"`
}

// lgStatuses maps the store's run statuses to LangGraph's.
var lgStatuses = map[string]string{
	store.RunPending:     "pending",
	store.RunRunning:     "running",
	store.RunSuccess:     "success",
	store.RunError:       "error",
	store.RunCancelled:   "interrupted",
	store.RunInterrupted: "error",
}

// lgStatus is a run's LangGraph status. A run that parked for a person
// ended as a LangGraph run that reached an interrupt() does: with
// success (its thread is "interrupted").
func lgStatus(r store.Run) string {
	if parked(r) {
		return "success"
	}
	return lgStatuses[r.Status]
}

func (s *dialect) runObject(r store.Run) lgRunObject {
	o := lgRunObject{
		RunID: r.ID, ThreadID: r.ThreadID, AssistantID: assistantID(r.Route), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Status: lgStatus(r), Metadata: json.RawMessage(`{}`), MultitaskStrategy: "reject", Kwargs: map[string]any{},
		Route: r.Route, Error: r.Error,
	}
	if o.Status == "" {
		o.Status = r.Status
	}
	if !isNull(r.Metadata) {
		o.Metadata = r.Metadata
	}
	var kept runAttrs
	if known := s.known.get(r.ID); known != nil {
		if !isNull(known.Metadata) {
			o.Metadata = known.Metadata
		}
		kept = runAttrs{AssistantID: known.AssistantID, Multitask: known.Multitask, Kwargs: known.Kwargs}
	} else if len(r.Attrs) > 0 {
		_ = json.Unmarshal(r.Attrs, &kept) // the run was started elsewhere: what it kept
	}
	if kept.Multitask != "" {
		o.MultitaskStrategy, o.Kwargs = kept.Multitask, kept.Kwargs
	}
	if kept.AssistantID != "" {
		o.AssistantID = kept.AssistantID
	}
	return o
}

// lgCreateRun is POST /threads/:id/runs: a background run. It answers at
// once with the run; join, stream or poll it by its id.
func (s *dialect) lgCreateRun(c echo.Context) error {
	run, req, body, err := s.parseLGRun(c, c.Param("id"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	started, queued, err := s.startLG(ctx, run, req, body)
	if err != nil {
		return err
	}
	if started == nil {
		return s.answerRun(c, run.ThreadID, queued.ID)
	}
	if beforeRunAnswer != nil {
		beforeRunAnswer(run.ThreadID, started)
	}
	r, err := s.host.GetRun(ctx, started.ID)
	if errors.Is(err, store.ErrNotFound) {
		// Another request rolled it back (and deleted it) since it
		// started: it was created, and stopped.
		now := time.Now().UTC()
		r, err = store.Run{ID: started.ID, ThreadID: run.ThreadID, Route: run.RouteID, Status: store.RunCancelled, CreatedAt: now, UpdatedAt: now}, nil
	}
	if err != nil {
		return err
	}
	setRunHeaders(c, run.ThreadID, started.ID)
	return c.JSON(http.StatusOK, s.runObject(r))
}

// beforeRunAnswer, when set (by tests), runs after POST
// /threads/:id/runs started its run, before it answers.
var beforeRunAnswer func(threadID string, run *runner.Run)

func (s *dialect) answerRun(c echo.Context, threadID, runID string) error {
	r, err := s.host.GetRun(c.Request().Context(), runID)
	if err != nil {
		return err
	}
	setRunHeaders(c, threadID, runID)
	return c.JSON(http.StatusOK, s.runObject(r))
}

// threadRun reads a run of the thread in the path, or answers 404.
func (s *dialect) threadRun(c echo.Context) (store.Run, error) {
	threadID, runID := c.Param("id"), c.Param("run")
	r, err := s.host.GetRun(c.Request().Context(), runID)
	if err != nil || r.ThreadID != threadID {
		if _, terr := s.host.GetThread(c.Request().Context(), threadID); terr != nil {
			return store.Run{}, terr
		}
		return store.Run{}, wire.NewError(http.StatusNotFound, "run_not_found", "thread "+threadID+" has no run "+runID)
	}
	return r, nil
}

func (s *dialect) lgGetRun(c echo.Context) error {
	r, err := s.threadRun(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.runObject(r))
}

// lgListRuns is GET /threads/:id/runs with LangGraph's paging and status
// filter.
func (s *dialect) lgListRuns(c echo.Context) error {
	ctx := c.Request().Context()
	runs, err := s.host.Runs(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	limit, offset := 10, 0
	if v := c.QueryParam("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
			return wire.BadBody("limit must be a number of runs")
		}
	}
	if v := c.QueryParam("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			return wire.BadBody("offset must be a number of runs")
		}
	}
	var fields []string
	if q := c.QueryParams()["select"]; len(q) > 0 {
		if err := json.Unmarshal(queryList(q), &fields); err != nil {
			return wire.BadBody(`select must name fields of a run, like select=["run_id","status"]`)
		}
	}
	status := c.QueryParam("status")
	out := []any{}
	for _, r := range runs {
		o := s.runObject(r)
		if status != "" && o.Status != status {
			continue
		}
		kept, err := selectFields(o, fields)
		if err != nil {
			return err
		}
		out = append(out, kept)
	}
	start := min(offset, len(out))
	return c.JSON(http.StatusOK, out[start:min(start+limit, len(out))])
}

// lgJoinRun is GET /threads/:id/runs/:run/join: it waits for the run to
// end and answers with the thread's state values then.
func (s *dialect) lgJoinRun(c echo.Context) error {
	r, err := s.threadRun(c)
	if err != nil {
		return err
	}
	return s.joinResult(c, r)
}

// joinResult waits for run r to end (to start first, when it is queued)
// and answers with the thread's state values then.
func (s *dialect) joinResult(c echo.Context, r store.Run) error {
	ctx := c.Request().Context()
	if r.Status == store.RunPending {
		now, err := s.host.AwaitStart(ctx, r.ID)
		if err != nil {
			if ctx.Err() != nil {
				return nil // the client left; the run stays queued
			}
			return err
		}
		r = now
	}
	if live := s.host.Active(ctx, r.ThreadID); live != nil && live.ID == r.ID {
		select {
		case <-live.Done():
			return s.answerResult(c, r.ThreadID, live.Output())
		case <-ctx.Done():
			return nil
		}
	}
	if r.Status == store.RunRunning {
		// Another replica of a shared store runs it: wait for its end
		// there, by the store.
		var err error
		if r, err = s.waitStored(ctx, r); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				// Rolled back by a newer run: the thread's state is
				// what it was before it.
				return s.answerResult(c, r.ThreadID, json.RawMessage(`{"cancelled":true}`))
			}
			return nil // the client left
		}
	}
	if parked(r) {
		cp, err := s.host.Latest(ctx, r.ThreadID)
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, withInterrupts(lcCheckpointValues(cp)))
	}
	if r.Status == store.RunError || r.Status == store.RunInterrupted {
		return s.answerResult(c, r.ThreadID, wire.MustJSON(map[string]string{"error": r.Error}))
	}
	runs, err := s.host.FinishedRuns(ctx, store.FinishedQuery{ThreadID: r.ThreadID, RunID: r.ID, Done: true})
	if err == nil && len(runs) == 1 {
		var d struct {
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(runs[0].Done, &d) == nil {
			return s.answerResult(c, r.ThreadID, d.Output)
		}
	}
	cp, err := s.host.Latest(ctx, r.ThreadID)
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, lcCheckpointValues(cp))
}

// waitStored waits until run r, which does not run here, is no longer
// running by the store, reading its events from the store as they commit
// to its end, and returns it as it ended; or ctx's error.
func (s *dialect) waitStored(ctx context.Context, r store.Run) (store.Run, error) {
	f := s.host.Follow(r.ID, math.MaxInt64) // no event is read: only the run's end
	defer f.Close()
	for {
		if _, err := f.Next(ctx); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return r, err
		}
	}
	return s.host.GetRun(ctx, r.ID)
}

// lgCancelRun is POST /threads/:id/runs/:run/cancel?wait=0|1&action=interrupt.
func (s *dialect) lgCancelRun(c echo.Context) error {
	r, err := s.threadRun(c)
	if err != nil {
		return err
	}
	switch c.QueryParam("action") {
	case "", "interrupt", "rollback":
	default:
		return wire.BadBody("action must be interrupt or rollback, not " + strconv.Quote(c.QueryParam("action")))
	}
	if r.Status == store.RunPending {
		// Queued: it leaves the queue and never runs.
		err := s.host.Dequeue(c.Request().Context(), r.ID)
		if !errors.Is(err, store.ErrNotFound) {
			if err != nil {
				return err
			}
			return s.answerRun(c, r.ThreadID, r.ID)
		}
		// It started meanwhile: cancel it as a running run.
	}
	wait := c.QueryParam("wait") == "1" || c.QueryParam("wait") == "true"
	if c.QueryParam("action") == "rollback" {
		return s.rollbackRun(c, r, wait)
	}
	live := s.host.Active(c.Request().Context(), r.ThreadID)
	if live == nil || live.ID != r.ID {
		// Another replica of a shared store may have it.
		remote, ok := s.host.RemoteRun(c.Request().Context(), r.ThreadID)
		if !ok || remote.ID != r.ID {
			return wire.NewError(http.StatusConflict, "run_not_running", "run "+r.ID+" is "+lgStatus(r)+", not running: there is nothing to cancel")
		}
		if err := s.host.StopRemote(c.Request().Context(), remote, wait); err != nil {
			return err
		}
		return s.answerRun(c, r.ThreadID, r.ID)
	}
	s.host.Cancel(c.Request().Context(), r.ThreadID)
	if wait {
		select {
		case <-live.Done():
		case <-c.Request().Context().Done():
			return nil
		}
	}
	return s.answerRun(c, r.ThreadID, r.ID)
}

// rollbackRun is a cancel with action=rollback: the run stops and is
// deleted with every step it saved. It answers with the run as it ended,
// which can no longer be read.
func (s *dialect) rollbackRun(c echo.Context, r store.Run, wait bool) error {
	reached, err := s.host.RollbackRun(c.Request().Context(), r, wait)
	switch {
	case err != nil:
		if c.Request().Context().Err() != nil {
			return nil
		}
		return err
	case !reached:
		return wire.NewError(http.StatusConflict, "run_not_running", "run "+r.ID+" is "+lgStatus(r)+", not running: there is nothing to roll back")
	}
	r.Status = store.RunCancelled
	setRunHeaders(c, r.ThreadID, r.ID)
	return c.JSON(http.StatusOK, s.runObject(r))
}

// Kinds of stateless run.
const (
	statelessBackground = iota
	statelessStream
	statelessWait
)

// lgStateless serves POST /runs, /runs/stream and /runs/wait: a run on a
// new thread, deleted when the run ends unless on_completion is "keep".
func (s *dialect) lgStateless(kind int) echo.HandlerFunc {
	return func(c echo.Context) error {
		threadID := uuid.NewString()
		run, req, body, err := s.parseLGRun(c, threadID)
		if err != nil {
			return err
		}
		if kind == statelessWait {
			req.Stream = false
		}
		// The run's thread is kept until this request has answered: a
		// run that ends before the answer is written (a fast model on a
		// busy server) is read back from the store.
		answered := make(chan struct{})
		defer close(answered)
		started, queued, err := s.startStateless(c.Request().Context(), run, req, body, answered)
		if err != nil {
			return err
		}
		if started != nil && beforeStatelessAnswer != nil {
			beforeStatelessAnswer(threadID, started)
		}
		if started == nil {
			// A delayed run: the thread is kept, as a background run's.
			switch kind {
			case statelessStream:
				return s.streamQueued(c, run, queued)
			case statelessWait:
				setRunHeaders(c, threadID, queued.ID)
				return s.joinResult(c, queued)
			}
			return s.answerRun(c, threadID, queued.ID)
		}
		switch kind {
		case statelessStream:
			return s.streamLG(c, run, started, fromStart)
		case statelessWait:
			return s.waitLG(c, threadID, started)
		}
		return s.answerRun(c, threadID, started.ID)
	}
}

// beforeStatelessAnswer, when set (by tests), runs after a stateless run
// has started, before its request answers.
var beforeStatelessAnswer func(threadID string, run *runner.Run)

// startStateless starts a run on a thread of its own (run.ThreadID, new),
// which is deleted when the run ends and answered is closed (nil: when the
// run ends), unless on_completion is "keep". A delayed run answers with
// started nil and the queued run.
func (s *dialect) startStateless(ctx context.Context, run *lgRun, req runner.Request, body lgRunBody, answered <-chan struct{}) (*runner.Run, store.Run, error) {
	body.IfNotExists = "create"
	started, queued, err := s.startLG(ctx, run, req, body)
	if err != nil || started == nil {
		return started, queued, err
	}
	if body.OnCompletion != "keep" {
		threadID := run.ThreadID
		go func() {
			<-started.Done()
			if answered != nil {
				<-answered
			}
			if err := s.host.DeleteThread(context.Background(), threadID); err != nil && !errors.Is(err, store.ErrNotFound) {
				s.host.Logger().Warn("cannot delete the thread of a stateless run", "thread", threadID, "err", err)
			}
		}()
	}
	return started, queued, nil
}

// lgThread is the LangGraph Thread object: Dawn's thread with its state
// values.
type lgThread struct {
	store.Thread
	Values     json.RawMessage `json:"values"`
	Interrupts map[string]any  `json:"interrupts"`
}

// threadSearch is the body of POST /threads/search and /count.
type threadSearch struct {
	IDs       []string        `json:"ids"`
	Metadata  json.RawMessage `json:"metadata"`
	Values    json.RawMessage `json:"values"`
	Status    string          `json:"status"`
	Limit     int             `json:"limit"`
	Offset    int             `json:"offset"`
	SortBy    string          `json:"sort_by"`
	SortOrder string          `json:"sort_order"`
	// Select keeps these fields of each thread found (search only).
	Select []string `json:"select"`
	// Extract is the Python server's extraction of values by path, which
	// Dawn does not serve: refused rather than ignored.
	Extract json.RawMessage `json:"extract"`
}

func (q threadSearch) query() (store.ThreadQuery, error) {
	if !isNull(q.Extract) {
		return store.ThreadQuery{}, wire.BadBody("extract is not supported: use select to keep fields, and read a value from the thread's values")
	}
	if err := oneOf("status", q.Status, store.StatusIdle, store.StatusBusy, store.StatusInterrupted, store.StatusError); err != nil {
		return store.ThreadQuery{}, err
	}
	return store.ThreadQuery{IDs: q.IDs, Metadata: q.Metadata, Values: q.Values, Status: q.Status, SortBy: q.SortBy, SortOrder: q.SortOrder, Limit: q.Limit, Offset: q.Offset}, nil
}

func (s *dialect) searchThreads(c echo.Context) error {
	ctx := c.Request().Context()
	var body threadSearch
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	q, err := body.query()
	if err != nil {
		return err
	}
	threads, err := s.host.SearchThreads(ctx, q)
	if err != nil {
		return err
	}
	out := make([]any, 0, len(threads))
	for _, t := range threads {
		cp, err := s.host.Latest(ctx, t.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			return err
		}
		kept, err := selectFields(lgThread{Thread: t, Values: lcCheckpointValues(cp), Interrupts: threadInterrupts(t.ID, cp.Values)}, body.Select)
		if err != nil {
			return err
		}
		out = append(out, kept)
	}
	return c.JSON(http.StatusOK, out)
}

func (s *dialect) countThreads(c echo.Context) error {
	var body threadSearch
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	q, err := body.query()
	if err != nil {
		return err
	}
	n, err := s.host.CountThreads(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, n)
}

// fromStart is the Last-Event-ID of a stream read from its start, with
// the state the run started from (see writeLG).
const fromStart = -1

// lgLastEventID is lastEventID as the LangGraph SDK sends it: "-1", like
// no header (nor after parameter) at all, asks for the stream from its
// start (fromStart); any other id, 0 included, for the parts after it,
// without the opening state a client that has seen parts already shows.
func lgLastEventID(c echo.Context) (int64, error) {
	if c.Request().Header.Get("Last-Event-ID") == "-1" {
		return fromStart, nil
	}
	if c.Request().Header.Get("Last-Event-ID") == "" && c.QueryParam("after") == "" {
		return fromStart, nil
	}
	return wire.LastEventID(c)
}
