package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/labstack/echo/v4"
)

// This file streams a LangGraph run: POST runs/stream, a thread's
// stream, and the translation of a run's log into LangGraph's events.

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
