package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Assistant is one version of an assistant: a configured variant of a
// graph, which in Dawn is a route (GraphID is the route id). Config,
// Context and Metadata are JSON objects; what they may set is the
// server's business, not the store's.
type Assistant struct {
	ID                        string
	Version                   int
	GraphID, Name             string
	Description               string
	Config, Context, Metadata json.RawMessage
	CreatedAt, UpdatedAt      time.Time
}

// AssistantQuery selects assistants (or one assistant's versions). Zero
// fields select everything; Name keeps names that contain it, any case;
// Metadata keeps those whose metadata has each key with an equal value.
// SortBy is "assistant_id", "graph_id", "name", "created_at" (the
// default), "updated_at" or "version"; SortOrder "asc" or "desc". Limit
// defaults to 10, at most 1000.
type AssistantQuery struct {
	GraphID, Name     string
	Metadata          json.RawMessage
	SortBy, SortOrder string
	Limit, Offset     int
}

func assistantOf(r dialect.AssistantRow) Assistant {
	return Assistant{ID: r.ID, Version: r.Version, GraphID: r.GraphID, Name: r.Name, Description: r.Description,
		Config: json.RawMessage(r.Config), Context: json.RawMessage(r.Context), Metadata: json.RawMessage(r.Metadata),
		CreatedAt: fromNanos(r.CreatedAt), UpdatedAt: fromNanos(r.UpdatedAt)}
}

// row checks a and returns it as stored.
func (a Assistant) row() (dialect.AssistantRow, error) {
	if err := checkID("assistant", a.ID); err != nil {
		return dialect.AssistantRow{}, err
	}
	if a.GraphID == "" {
		return dialect.AssistantRow{}, fmt.Errorf("assistant %q: %w: graph_id must not be empty", a.ID, ErrInvalid)
	}
	r := dialect.AssistantRow{ID: a.ID, Version: a.Version, GraphID: a.GraphID, Name: a.Name, Description: a.Description,
		CreatedAt: nanos(a.CreatedAt), UpdatedAt: nanos(a.UpdatedAt)}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		to   *string
	}{{"config", a.Config, &r.Config}, {"context", a.Context, &r.Context}, {"metadata", a.Metadata, &r.Metadata}} {
		v, err := compactObject(f.raw)
		if err != nil {
			return r, fmt.Errorf("assistant %q: %s: %w", a.ID, f.name, err)
		}
		*f.to = v
	}
	return r, nil
}

func (q AssistantQuery) filter(versions bool, id string) (dialect.AssistantFilter, error) {
	f := dialect.AssistantFilter{Versions: versions, ID: id, GraphID: q.GraphID, Name: q.Name, Offset: max(q.Offset, 0)}
	var err error
	if f.Metadata, err = jsonFilter("metadata", q.Metadata); err != nil {
		return f, err
	}
	byDefault, desc := "created_at", false
	if versions {
		byDefault, desc = "version", true
	}
	f.Sort, f.Desc, f.Limit, err = order{by: q.SortBy, dir: q.SortOrder, limit: q.Limit}.check(
		[]string{"assistant_id", "graph_id", "name", "created_at", "updated_at", "version"}, byDefault, desc)
	return f, err
}

// CreateAssistant stores a new assistant at version 1, stamped with the
// store's clock. It fails with ErrExists when the id is taken, ErrInvalid
// for a field it cannot keep.
func (s *DB) CreateAssistant(ctx context.Context, a Assistant) (Assistant, error) {
	now := s.now()
	a.Version, a.CreatedAt, a.UpdatedAt = 1, fromNanos(now), fromNanos(now)
	row, err := a.row()
	if err != nil {
		return Assistant{}, err
	}
	err = s.write(ctx, func(tx dialect.Tx) error {
		err := tx.InsertAssistant(ctx, row)
		if errors.Is(err, dialect.ErrTaken) {
			return fmt.Errorf("assistant %q: %w", a.ID, ErrExists)
		}
		if err == nil {
			err = tx.InsertAssistantVersion(ctx, row)
		}
		if err != nil {
			return fmt.Errorf("store: create assistant %q: %w", a.ID, err)
		}
		return nil
	})
	if err != nil {
		return Assistant{}, err
	}
	return assistantOf(row), nil
}

// GetAssistant returns an assistant at its current version, or
// ErrNotFound.
func (s *DB) GetAssistant(ctx context.Context, id string) (Assistant, error) {
	rows, err := s.d.Assistants(ctx, dialect.AssistantFilter{ID: id, Limit: 1})
	if err != nil {
		return Assistant{}, fmt.Errorf("store: get assistant %q: %w", id, err)
	}
	if len(rows) == 0 {
		return Assistant{}, fmt.Errorf("assistant %q: %w", id, ErrNotFound)
	}
	return assistantOf(rows[0]), nil
}

// UpdateAssistant makes a new version of an assistant in one
// transaction: change gets the current version and edits it (an error
// from it undoes nothing and is returned as it is). The new version is
// one above the highest kept and becomes the current one; ID, GraphID
// and CreatedAt stay. ErrNotFound when there is no such assistant.
func (s *DB) UpdateAssistant(ctx context.Context, id string, change func(*Assistant) error) (Assistant, error) {
	var out Assistant
	err := s.write(ctx, func(tx dialect.Tx) error {
		old, err := lockAssistant(ctx, tx, id)
		if err != nil {
			return err
		}
		last, err := tx.LastAssistantVersion(ctx, id)
		if err != nil {
			return fmt.Errorf("store: update assistant %q: %w", id, err)
		}
		a := assistantOf(old)
		if err := change(&a); err != nil {
			return err
		}
		a.ID, a.GraphID, a.Version, a.CreatedAt, a.UpdatedAt = old.ID, old.GraphID, last+1, fromNanos(old.CreatedAt), fromNanos(s.now())
		row, err := a.row()
		if err != nil {
			return err
		}
		if err := errors.Join(tx.InsertAssistantVersion(ctx, row), tx.PutAssistant(ctx, row)); err != nil {
			return fmt.Errorf("store: update assistant %q: %w", id, err)
		}
		out = assistantOf(row)
		return nil
	})
	return out, err
}

func lockAssistant(ctx context.Context, tx dialect.AssistantTx, id string) (dialect.AssistantRow, error) {
	r, err := tx.Assistant(ctx, id)
	if errors.Is(err, dialect.ErrNoRow) {
		return r, fmt.Errorf("assistant %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("store: read assistant %q: %w", id, err)
	}
	return r, nil
}

// SetLatestAssistant makes a kept version of an assistant its current
// one. ErrNotFound when there is no such assistant or version.
func (s *DB) SetLatestAssistant(ctx context.Context, id string, version int) (Assistant, error) {
	var out Assistant
	err := s.write(ctx, func(tx dialect.Tx) error {
		if _, err := lockAssistant(ctx, tx, id); err != nil {
			return err
		}
		v, err := tx.AssistantVersion(ctx, id, version)
		if errors.Is(err, dialect.ErrNoRow) {
			return fmt.Errorf("assistant %q has no version %d: %w", id, version, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: read assistant %q version %d: %w", id, version, err)
		}
		v.UpdatedAt = s.now()
		if err := tx.PutAssistant(ctx, v); err != nil {
			return fmt.Errorf("store: set assistant %q to version %d: %w", id, version, err)
		}
		out = assistantOf(v)
		return nil
	})
	return out, err
}

// DeleteAssistant deletes an assistant with every version;
// ErrNotFound when there is no such assistant.
func (s *DB) DeleteAssistant(ctx context.Context, id string) error {
	return s.write(ctx, func(tx dialect.Tx) error {
		err := tx.DeleteAssistant(ctx, id)
		if errors.Is(err, dialect.ErrNoRow) {
			return fmt.Errorf("assistant %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: delete assistant %q: %w", id, err)
		}
		return nil
	})
}

// SearchAssistants returns one page of the assistants q selects, each at
// its current version.
func (s *DB) SearchAssistants(ctx context.Context, q AssistantQuery) ([]Assistant, error) {
	return s.assistants(ctx, q, false, "")
}

// AssistantVersions returns one page of an assistant's versions that q
// selects (its GraphID and Name are ignored), newest first by default.
func (s *DB) AssistantVersions(ctx context.Context, id string, q AssistantQuery) ([]Assistant, error) {
	q.GraphID, q.Name = "", ""
	return s.assistants(ctx, q, true, id)
}

func (s *DB) assistants(ctx context.Context, q AssistantQuery, versions bool, id string) ([]Assistant, error) {
	f, err := q.filter(versions, id)
	if err != nil {
		return nil, err
	}
	rows, err := s.d.Assistants(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("store: search assistants: %w", err)
	}
	out := make([]Assistant, len(rows))
	for i, r := range rows {
		out[i] = assistantOf(r)
	}
	return out, nil
}

// CountAssistants counts the assistants q selects; its page and sort are
// ignored.
func (s *DB) CountAssistants(ctx context.Context, q AssistantQuery) (int, error) {
	q.SortBy, q.SortOrder = "", ""
	f, err := q.filter(false, "")
	if err != nil {
		return 0, err
	}
	n, err := s.d.CountAssistants(ctx, f)
	if err != nil {
		return 0, fmt.Errorf("store: count assistants: %w", err)
	}
	return n, nil
}

// PatchThreadMetadata sets the members of patch (a JSON object) in a
// thread's metadata, keeping the others, as LangGraph's thread update
// merges them, and returns the thread. ErrNotFound when there is no such
// thread.
func (s *DB) PatchThreadMetadata(ctx context.Context, id string, patch json.RawMessage) (Thread, error) {
	add, err := metadataPatch(patch)
	if err != nil {
		return Thread{}, fmt.Errorf("thread %q: metadata: %w", id, err)
	}
	err = s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockThread(ctx, id)
		if errors.Is(err, dialect.ErrNoRow) {
			return fmt.Errorf("thread %q: %w", id, ErrNotFound)
		}
		var old string
		if err == nil {
			old, err = tx.ThreadMetadata(ctx, l.PK)
		}
		if err == nil {
			// Written even when unchanged: an update is an update.
			merged, _ := mergeMetadata(old, add)
			err = tx.SetThreadMetadata(ctx, l.PK, merged, s.now())
		}
		if err != nil {
			return fmt.Errorf("store: update thread %q: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Thread{}, err
	}
	return s.GetThread(ctx, id)
}
