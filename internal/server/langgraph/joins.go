package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/labstack/echo/v4"
)

// This file rejoins runs: a run's stream from any replica, from the
// store once it has ended, and GET /threads/:id/runs/:run/join.

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
