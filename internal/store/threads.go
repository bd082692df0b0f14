package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Thread is a conversation thread as the HTTP API shows it.
type Thread struct {
	ID        string          `json:"thread_id"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Metadata  json.RawMessage `json:"metadata"` // always a JSON object, "{}" when none
	Status    string          `json:"status"`
	// Owner is the user the thread belongs to, "" for none (a thread
	// created without authentication or by the service credential). The
	// wires never show it: whom a thread belongs to is the server's
	// business, and a caller only ever sees their own.
	Owner string `json:"-"`
	// TTL is how long the thread lives after its last update (its
	// creation, a run's start, steps and end, a state update, a change
	// of metadata or TTL), and ExpiresAt when it expires; zero for a
	// thread that does not expire (see SweepThreads). The wires never
	// show them, as LangGraph's Thread does not.
	TTL       time.Duration `json:"-"`
	ExpiresAt time.Time     `json:"-"`
}

// threadOf turns a stored thread into a Thread.
func threadOf(r dialect.ThreadRow) Thread {
	return Thread{ID: r.ID, CreatedAt: fromNanos(r.CreatedAt), UpdatedAt: fromNanos(r.UpdatedAt),
		Metadata: json.RawMessage(r.Metadata), Status: r.Status, Owner: r.Owner,
		TTL: time.Duration(r.TTL), ExpiresAt: fromNanos(r.ExpiresAt)}
}

// CreateThread creates an idle thread that belongs to no user (see
// CreateOwnedThread).
func (s *DB) CreateThread(ctx context.Context, id string, metadata json.RawMessage) (Thread, error) {
	return s.CreateOwnedThread(ctx, "", id, metadata)
}

// CreateOwnedThread creates an idle thread that belongs to owner ("" for
// none). metadata must be a JSON object, or empty for none. It fails with
// ErrExists when the id is taken, whoever owns that thread: an id is
// never handed to a second owner.
func (s *DB) CreateOwnedThread(ctx context.Context, owner, id string, metadata json.RawMessage) (Thread, error) {
	return s.CreateOwnedThreadTTL(ctx, owner, id, metadata, 0)
}

// CreateOwnedThreadTTL is CreateOwnedThread for a thread that expires ttl
// after its last update (see SweepThreads); a ttl of 0 makes one that
// does not expire.
func (s *DB) CreateOwnedThreadTTL(ctx context.Context, owner, id string, metadata json.RawMessage, ttl time.Duration) (Thread, error) {
	if err := checkID("thread", id); err != nil {
		return Thread{}, err
	}
	if err := checkTTL(ttl, "a thread"); err != nil {
		return Thread{}, fmt.Errorf("thread %q: %w", id, err)
	}
	meta, err := compactObject(metadata)
	if err != nil {
		return Thread{}, fmt.Errorf("thread %q: metadata: %w", id, err)
	}
	now := s.now()
	row := dialect.ThreadRow{ID: id, CreatedAt: now, UpdatedAt: now, Metadata: meta, Status: StatusIdle, Owner: owner}
	if ttl > 0 {
		row.TTL, row.ExpiresAt = int64(ttl), now+int64(ttl)
	}
	err = s.write(ctx, func(tx dialect.Tx) error {
		_, err := tx.InsertThread(ctx, row)
		if errors.Is(err, dialect.ErrTaken) {
			return fmt.Errorf("thread %q: %w", id, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("store: create thread %q: %w", id, err)
		}
		return s.checkThreads(ctx, tx, owner)
	})
	if err != nil {
		return Thread{}, err
	}
	return threadOf(row), nil
}

// compactObject checks that raw is a JSON object (or empty, meaning {}) and
// returns it compacted.
func compactObject(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "{}", nil
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return "", fmt.Errorf("%w: must be a JSON object such as {\"user\":\"ann\"}", ErrInvalid)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return buf.String(), nil
}

// GetThread returns the thread with the given id, or ErrNotFound.
func (s *DB) GetThread(ctx context.Context, id string) (Thread, error) {
	r, err := s.d.Thread(ctx, id)
	if errors.Is(err, dialect.ErrNoRow) {
		return Thread{}, fmt.Errorf("thread %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Thread{}, fmt.Errorf("store: get thread %q: %w", id, err)
	}
	return threadOf(r), nil
}

// DeleteThread deletes a thread with its runs, messages, checkpoint and
// events. It fails with ErrBusy while the thread has a running run.
func (s *DB) DeleteThread(ctx context.Context, id string) error {
	return s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockThread(ctx, id)
		switch {
		case errors.Is(err, dialect.ErrNoRow):
			return fmt.Errorf("thread %q: %w", id, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: delete thread %q: %w", id, err)
		case l.Running:
			return fmt.Errorf("thread %q: %w: cancel it or wait for it to finish, then delete", id, ErrBusy)
		}
		if err := tx.DeleteThread(ctx, l.PK); err != nil {
			return fmt.Errorf("store: delete thread %q: %w", id, err)
		}
		return nil
	})
}

// threadExists returns nil when the thread exists, an ErrNotFound error
// when it does not.
func (s *DB) threadExists(ctx context.Context, id string) error {
	_, err := s.GetThread(ctx, id)
	return err
}

// metadataPatch reads a JSON object of metadata members to set (nil or
// null: none).
func metadataPatch(raw json.RawMessage) (map[string]json.RawMessage, error) {
	compact, err := compactObject(raw)
	if err != nil {
		return nil, err
	}
	var add map[string]json.RawMessage
	if err := json.Unmarshal([]byte(compact), &add); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return add, nil
}

// mergeMetadata is the metadata old with the members of add set, and
// whether that changes it.
func mergeMetadata(old string, add map[string]json.RawMessage) (string, bool) {
	if len(add) == 0 {
		return old, false
	}
	meta := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(old), &meta); err != nil || meta == nil {
		meta = map[string]json.RawMessage{}
	}
	changed := false
	for k, v := range add {
		if prev, ok := meta[k]; !ok || !bytes.Equal(prev, v) {
			meta[k], changed = v, true
		}
	}
	if !changed {
		return old, false
	}
	merged, _ := json.Marshal(meta) // raw members of a decoded object encode again
	return string(merged), true
}

// patchMetadata sets the members of add in the metadata of the thread
// the transaction locked, writing only when that changes it.
func patchMetadata(ctx context.Context, tx dialect.ThreadTx, threadPK int64, add map[string]json.RawMessage, now int64) error {
	if len(add) == 0 {
		return nil
	}
	old, err := tx.ThreadMetadata(ctx, threadPK)
	if err != nil {
		return err
	}
	merged, changed := mergeMetadata(old, add)
	if !changed {
		return nil
	}
	return tx.SetThreadMetadata(ctx, threadPK, merged, now)
}
