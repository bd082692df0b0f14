package wire

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// NewThread is the body of POST /threads that every wire serving it
// reads alike: the thread's id (a new one when ""), its metadata and its
// ttl (see ThreadTTL).
type NewThread struct {
	ThreadID string          `json:"thread_id"`
	Metadata json.RawMessage `json:"metadata"`
	TTL      json.RawMessage `json:"ttl"`
}

// ThreadMaker creates threads of the caller's (Threads' CreateThreadTTL).
type ThreadMaker interface {
	CreateThreadTTL(ctx context.Context, id string, metadata json.RawMessage, ttl time.Duration) (store.Thread, error)
}

// CreateThread reads the request's NewThread and creates its thread
// through m: a bad ttl, metadata that is no object or a bad id is a 400,
// a thread that exists a 409 thread_exists, each before anything is
// written. Dawn's wire and the LangGraph dialect (which adds if_exists
// and supersteps) create threads through it alike.
func CreateThread(c echo.Context, m ThreadMaker) (store.Thread, error) {
	var body NewThread
	if err := Decode(c, &body); err != nil {
		return store.Thread{}, err
	}
	ttl, err := ThreadTTL(body.TTL)
	if err != nil {
		return store.Thread{}, err
	}
	if len(body.Metadata) > 0 && string(body.Metadata) != "null" && body.Metadata[0] != '{' {
		return store.Thread{}, BadBody("metadata must be a JSON object")
	}
	id := body.ThreadID
	if id == "" {
		id = uuid.NewString()
	} else if err := CheckThreadID(id); err != nil {
		return store.Thread{}, err
	}
	t, err := m.CreateThreadTTL(c.Request().Context(), id, body.Metadata, ttl)
	if errors.Is(err, store.ErrExists) {
		return t, NewError(http.StatusConflict, "thread_exists", "thread "+id+" already exists")
	}
	return t, err
}
