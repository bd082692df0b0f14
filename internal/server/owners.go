package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/crons"
	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/labstack/echo/v4"
)

// This file is the one owner check of every wire. The host's reads of
// threads, runs, crons and items take the request's context and answer a
// thread the caller may not see (ownership.Sees) exactly as a thread that
// does not exist; guardThread puts the same check in front of every
// handler whose path names a thread. A request without an identity (a
// server without authentication) and the service credential see every
// thread, and pay no extra read.

// threadNotFound is the store's answer for a missing thread, word for
// word, so that another user's thread and no thread read the same.
func threadNotFound(id string) error { return wire.MissingThread(id) }

// runNotFound is the store's answer for a missing run.
func runNotFound(id string) error { return fmt.Errorf("run %q: %w", id, store.ErrNotFound) }

// GetThread is the store's, with another user's thread not found.
func (h *host) GetThread(ctx context.Context, id string) (store.Thread, error) {
	t, err := h.Store.GetThread(ctx, id)
	if err == nil && !ownership.Sees(ctx, t.Owner) {
		return store.Thread{}, threadNotFound(id)
	}
	return t, err
}

// visible returns nil when ctx may see thread id, the not-found answer
// when it may not or the thread does not exist; an unscoped ctx reads
// nothing.
func (h *host) visible(ctx context.Context, id string) error {
	if _, scoped := ownership.Owner(ctx); !scoped {
		return nil
	}
	_, err := h.GetThread(ctx, id)
	return err
}

// notOthers returns nil when thread id is ctx's or does not exist (a run
// creates it), the not-found answer when it is another user's.
func (h *host) notOthers(ctx context.Context, id string) error {
	if _, scoped := ownership.Owner(ctx); !scoped {
		return nil
	}
	t, err := h.Store.GetThread(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case !ownership.Sees(ctx, t.Owner):
		return threadNotFound(id)
	}
	return nil
}

func (h *host) CreateThread(ctx context.Context, id string, metadata json.RawMessage) (store.Thread, error) {
	return h.CreateThreadTTL(ctx, id, metadata, 0)
}

// CreateThreadTTL is CreateThread for a thread that expires ttl after its
// last update (0: never).
func (h *host) CreateThreadTTL(ctx context.Context, id string, metadata json.RawMessage, ttl time.Duration) (store.Thread, error) {
	owner, _ := ownership.Owner(ctx)
	return h.Store.CreateOwnedThreadTTL(ctx, owner, id, metadata, ttl)
}

func (h *host) DeleteThread(ctx context.Context, id string) error {
	if err := h.visible(ctx, id); err != nil {
		return err
	}
	return h.Store.DeleteThread(ctx, id)
}

func (h *host) Latest(ctx context.Context, threadID string) (store.Checkpoint, error) {
	if err := h.visible(ctx, threadID); err != nil {
		return store.Checkpoint{}, err
	}
	return h.Store.Latest(ctx, threadID)
}

func (h *host) Runs(ctx context.Context, threadID string) ([]store.Run, error) {
	if err := h.visible(ctx, threadID); err != nil {
		return nil, err
	}
	return h.Store.Runs(ctx, threadID)
}

func (h *host) FinishedRuns(ctx context.Context, q store.FinishedQuery) ([]store.FinishedRun, error) {
	if err := h.visible(ctx, q.ThreadID); err != nil {
		return nil, err
	}
	return h.Store.FinishedRuns(ctx, q)
}

// GetRun is the store's, with a run on another user's thread not found.
func (h *host) GetRun(ctx context.Context, runID string) (store.Run, error) {
	r, err := h.Store.GetRun(ctx, runID)
	if err == nil && h.visible(ctx, r.ThreadID) != nil {
		return store.Run{}, runNotFound(runID)
	}
	return r, err
}

// runVisible returns nil when ctx may see run runID.
func (h *host) runVisible(ctx context.Context, runID string) error {
	if _, scoped := ownership.Owner(ctx); !scoped {
		return nil
	}
	_, err := h.GetRun(ctx, runID)
	return err
}

func (h *host) Events(ctx context.Context, runID string, after int64) ([]stream.Event, error) {
	if err := h.runVisible(ctx, runID); err != nil {
		return nil, err
	}
	return h.Store.Events(ctx, runID, after)
}

func (h *host) EventsPage(ctx context.Context, runID string, after int64, limit int) ([]stream.Event, error) {
	if err := h.runVisible(ctx, runID); err != nil {
		return nil, err
	}
	return h.Store.EventsPage(ctx, runID, after, limit)
}

// SearchThreads and CountThreads filter by the caller's user in the
// database: no page or count holds another user's thread.
func (h *host) SearchThreads(ctx context.Context, q store.ThreadQuery) ([]store.Thread, error) {
	q.Owner, _ = ownership.Owner(ctx)
	return h.Store.SearchThreads(ctx, q)
}

func (h *host) CountThreads(ctx context.Context, q store.ThreadQuery) (int, error) {
	q.Owner, _ = ownership.Owner(ctx)
	return h.Store.CountThreads(ctx, q)
}

// Start and Resume refuse another user's thread before the runner
// reserves it (the store checks again, on the locked thread, so that a
// thread another user creates meanwhile is never adopted).
func (h *host) Start(ctx context.Context, req runner.Request) (*runner.Run, error) {
	if err := h.notOthers(ctx, req.ThreadID); err != nil {
		return nil, err
	}
	return h.s.runs.Start(ctx, req)
}

func (h *host) Resume(ctx context.Context, req runner.ResumeRequest) (*runner.Run, error) {
	if err := h.visible(ctx, req.ThreadID); err != nil {
		return nil, err
	}
	return h.s.runs.Resume(ctx, req)
}

// Active, Cancel, RemoteRun and StopRemote reach the runs of threads ctx
// may see: a wire that reaches a run before it reads the thread (such as
// LangGraph's multitask_strategy "interrupt") cannot stop another user's.
func (h *host) Active(ctx context.Context, threadID string) *runner.Run {
	if h.visible(ctx, threadID) != nil {
		return nil
	}
	return h.s.runs.Active(threadID)
}

func (h *host) Cancel(ctx context.Context, threadID string) (*runner.Run, bool) {
	if h.visible(ctx, threadID) != nil {
		return nil, false
	}
	return h.s.runs.Cancel(threadID)
}

func (h *host) RemoteRun(ctx context.Context, threadID string) (store.Run, bool) {
	if h.visible(ctx, threadID) != nil {
		return store.Run{}, false
	}
	return h.s.runs.RemoteRun(ctx, threadID)
}

func (h *host) StopRemote(ctx context.Context, r store.Run, wait bool) error {
	if err := h.visible(ctx, r.ThreadID); err != nil {
		return runNotFound(r.ID)
	}
	return h.s.stopRemote(ctx, r, wait, "cancel")
}

// CreateCron gives the cron the caller's user; a cron's ticks run as its
// owner (see StartCrons).
func (h *host) CreateCron(ctx context.Context, c store.Cron) (store.Cron, error) {
	c.Owner, _ = ownership.Owner(ctx)
	return h.Store.CreateCron(ctx, c)
}

func (h *host) UpdateCron(ctx context.Context, id string, change func(*store.Cron) error) (store.Cron, error) {
	return h.Store.UpdateCron(ctx, id, func(c *store.Cron) error {
		if !ownership.Sees(ctx, c.Owner) {
			return fmt.Errorf("cron %q: %w", id, store.ErrNotFound)
		}
		return change(c)
	})
}

func (h *host) DeleteCron(ctx context.Context, id string) error {
	if owner, scoped := ownership.Owner(ctx); scoped {
		n, err := h.Store.CountCrons(ctx, store.CronQuery{ID: id, Owner: owner})
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("cron %q: %w", id, store.ErrNotFound)
		}
	}
	return h.Store.DeleteCron(ctx, id)
}

func (h *host) SearchCrons(ctx context.Context, q store.CronQuery) ([]store.Cron, error) {
	q.Owner, _ = ownership.Owner(ctx)
	return h.Store.SearchCrons(ctx, q)
}

func (h *host) CountCrons(ctx context.Context, q store.CronQuery) (int, error) {
	q.Owner, _ = ownership.Owner(ctx)
	return h.Store.CountCrons(ctx, q)
}

// StartCrons makes s the starter of every tick's run, run as the cron's
// owner: the thread a tick creates is theirs, and a tick on a thread
// that is no longer theirs is refused. The new thread of a cron without
// one is ephemeral unless the cron keeps it (on_run_completed "keep"):
// the store records, as it creates the thread, that any server's sweep
// deletes it once the run is done, so that it does not outlive a server
// that dies before deleting it itself.
func (h *host) StartCrons(s crons.Starter) { h.cronStarter = ownedStarter{s} }

type ownedStarter struct{ crons.Starter }

func (o ownedStarter) StartCron(ctx context.Context, c store.Cron) error {
	ctx = ownership.As(ctx, c.Owner)
	if c.ThreadID == "" && c.OnRunCompleted != "keep" {
		ctx = runner.WithEphemeralThread(ctx)
	}
	return o.Starter.StartCron(ctx, c)
}

// The item store is per user: a user's namespaces live under ["users",
// user] (ownership.Namespace) and are shown without that prefix; the
// service and a server without authentication see the whole store.

func (h *host) PutItem(ctx context.Context, namespace []string, key string, value json.RawMessage) error {
	return h.Store.PutItem(ctx, ownership.Namespace(ctx, namespace), key, value)
}

func (h *host) PutItemTTL(ctx context.Context, namespace []string, key string, value json.RawMessage, ttl time.Duration) error {
	return h.Store.PutItemTTL(ctx, ownership.Namespace(ctx, namespace), key, value, ttl)
}

func (h *host) GetItem(ctx context.Context, namespace []string, key string) (store.Item, error) {
	it, err := h.Store.GetItem(ctx, ownership.Namespace(ctx, namespace), key)
	return ownedItem(ctx, it, err)
}

func (h *host) PeekItem(ctx context.Context, namespace []string, key string) (store.Item, error) {
	it, err := h.Store.PeekItem(ctx, ownership.Namespace(ctx, namespace), key)
	return ownedItem(ctx, it, err)
}

// ownedItem shows an item read from the store under the namespace its
// user named.
func ownedItem(ctx context.Context, it store.Item, err error) (store.Item, error) {
	if err != nil {
		return it, err
	}
	it.Namespace, _ = ownership.Unnamespace(ctx, it.Namespace)
	return it, nil
}

func (h *host) DeleteItem(ctx context.Context, namespace []string, key string) error {
	return h.Store.DeleteItem(ctx, ownership.Namespace(ctx, namespace), key)
}

func (h *host) SearchItems(ctx context.Context, q store.ItemQuery) ([]store.Item, error) {
	q.Prefix = ownership.Namespace(ctx, q.Prefix)
	found, err := h.Store.SearchItems(ctx, q)
	for i := range found {
		found[i].Namespace, _ = ownership.Unnamespace(ctx, found[i].Namespace)
	}
	return found, err
}

func (h *host) ListNamespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error) {
	q.Prefix = ownership.Namespace(ctx, q.Prefix)
	if _, scoped := ownership.Owner(ctx); scoped && q.MaxDepth > 0 {
		q.MaxDepth += 2
	}
	found, err := h.Store.ListNamespaces(ctx, q)
	out := found[:0]
	for _, ns := range found {
		if ns, ok := ownership.Unnamespace(ctx, ns); ok && len(ns) > 0 {
			out = append(out, ns)
		}
	}
	return out, err
}

// guardThread puts the owner check in front of h when path names a
// thread (":id" after "/threads/"): another user's thread answers as a
// missing one before h reads anything (wire.ThreadNotFound: a route
// whose handler answers a missing thread in its own words says so with
// wire.NotFoundAs), and a missing thread is left to h (a run creates it).
// Every handler of the server is registered through it (handle,
// mountWires, mountCapabilities), inside the route's own middleware, so
// that the answer has the wire's error shape.
//
// A wire's handler (checked true) reads every thread through the host,
// which answers another user's thread as a missing one; it also checks a
// request's body and headers before it reads the thread, and answers a
// bad one with a 400 whether the thread exists or not. So a request to
// it that carries input (a body, or a Last-Event-ID) goes on to h for
// another user's thread too: its bad input gets the 400 a missing
// thread's gets, word for word, and good input the host's not-found.
func (s *Server) guardThread(path string, h echo.HandlerFunc, checked bool) echo.HandlerFunc {
	if path != "/threads/:id" && !strings.HasPrefix(path, "/threads/:id/") {
		return h
	}
	return func(c echo.Context) error {
		err := s.host.notOthers(c.Request().Context(), c.Param("id"))
		if errors.Is(err, store.ErrNotFound) {
			if checked && carriesInput(c.Request()) {
				return h(c)
			}
			return wire.ThreadNotFound(c)
		}
		if err != nil {
			return err
		}
		return h(c)
	}
}

// carriesInput reports whether r has a body or a Last-Event-ID for its
// handler to check.
func carriesInput(r *http.Request) bool {
	return r.ContentLength != 0 || r.Header.Get("Last-Event-ID") != ""
}

// History, CheckpointAt, UpdateState and PatchThreadMetadata read or
// change a thread's checkpoints and metadata: another user's thread is
// not found.

func (h *host) History(ctx context.Context, threadID string, q store.HistoryQuery) ([]store.Checkpoint, error) {
	if err := h.visible(ctx, threadID); err != nil {
		return nil, err
	}
	return h.Store.History(ctx, threadID, q)
}

func (h *host) CheckpointAt(ctx context.Context, threadID, id string) (store.Checkpoint, error) {
	if err := h.visible(ctx, threadID); err != nil {
		return store.Checkpoint{}, err
	}
	return h.Store.CheckpointAt(ctx, threadID, id)
}

func (h *host) UpdateState(ctx context.Context, u store.StateUpdate) (store.Checkpoint, error) {
	if err := h.visible(ctx, u.ThreadID); err != nil {
		return store.Checkpoint{}, err
	}
	return h.Store.UpdateState(ctx, u)
}

func (h *host) PatchThreadMetadata(ctx context.Context, id string, patch json.RawMessage) (store.Thread, error) {
	if err := h.visible(ctx, id); err != nil {
		return store.Thread{}, err
	}
	return h.Store.PatchThreadMetadata(ctx, id, patch)
}

// SetThreadTTL gives a thread ctx may see a new ttl.
func (h *host) SetThreadTTL(ctx context.Context, id string, ttl time.Duration) (store.Thread, error) {
	if err := h.visible(ctx, id); err != nil {
		return store.Thread{}, err
	}
	return h.Store.SetThreadTTL(ctx, id, ttl)
}

// CopyThread copies a thread ctx may see; the copy keeps the thread's
// owner, so it is the caller's own.
func (h *host) CopyThread(ctx context.Context, fromID, toID string) (store.Thread, error) {
	if err := h.visible(ctx, fromID); err != nil {
		return store.Thread{}, err
	}
	return h.Store.CopyThread(ctx, fromID, toID)
}
