package capabilities

import (
	"context"
	"encoding/json"
	"time"
)

// ItemStore is the app's key-value store: JSON objects kept under a
// namespace (a path of labels, such as ["memories", "/support/[tenant]"])
// and a key, shared by every thread and every replica of the app's store,
// and served to clients as the LangGraph Store API. A tool reaches it as
// Invocation.Items (dawn.Store in app code).
type ItemStore interface {
	// Get reads the item under namespace and key; ok is false when there
	// is none.
	Get(ctx context.Context, namespace []string, key string) (item StoreItem, ok bool, err error)
	// Put keeps value, a JSON object, under namespace and key, replacing
	// the value of an item already there.
	Put(ctx context.Context, namespace []string, key string, value json.RawMessage) error
	// Delete deletes the item under namespace and key, if there is one.
	Delete(ctx context.Context, namespace []string, key string) error
	// Search returns the items under a namespace prefix that q selects.
	Search(ctx context.Context, prefix []string, q ItemSearch) ([]StoreItem, error)
}

// StoreItem is an item of an ItemStore.
type StoreItem struct {
	Namespace []string
	Key       string
	Value     json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
	// Score is how well the item matched ItemSearch.Query, 0 to 1 (by
	// meaning and words when the store has an index).
	Score float64
}

// ItemSearch selects items: those whose value holds each field of Filter
// with an equal JSON value and, when Query is set, whose text holds at
// least one of Query's words, case-insensitively, best match first; then
// Offset skipped and at most Limit (10 when 0) returned. When the app's
// store has an index (store.index in dawn.yaml), a Query also finds the
// items close to it in meaning, ranked by meaning fused with the word
// match (see docs/store.md).
type ItemSearch struct {
	Filter        map[string]json.RawMessage
	Query         string
	Limit, Offset int
}
