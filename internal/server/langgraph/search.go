package langgraph

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// This file searches and counts threads.

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
