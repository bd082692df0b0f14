package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Thread is a conversation thread as the HTTP API shows it.
type Thread struct {
	ID        string          `json:"thread_id"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Metadata  json.RawMessage `json:"metadata"` // always a JSON object, "{}" when none
	Status    string          `json:"status"`
}

// CreateThread creates an idle thread. metadata must be a JSON object, or
// empty for none. It fails with ErrExists when the id is taken.
func (s *SQLite) CreateThread(ctx context.Context, id string, metadata json.RawMessage) (Thread, error) {
	if err := checkID("thread", id); err != nil {
		return Thread{}, err
	}
	meta, err := compactObject(metadata)
	if err != nil {
		return Thread{}, fmt.Errorf("thread %q: metadata: %w", id, err)
	}
	now := s.now()
	err = s.write(ctx, func(ctx context.Context) error {
		_, err := s.insertThread(ctx, id, now, meta, StatusIdle)
		if errors.Is(err, errThreadExists) {
			return fmt.Errorf("thread %q: %w", id, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("store: create thread %q: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Thread{}, err
	}
	t := fromNanos(now)
	return Thread{ID: id, CreatedAt: t, UpdatedAt: t, Metadata: json.RawMessage(meta), Status: StatusIdle}, nil
}

// errThreadExists is insertThread's answer for a thread id that is taken.
var errThreadExists = errors.New("thread exists")

// insertThread inserts a thread row inside a write transaction and returns
// its pk, or errThreadExists when the id is taken.
func (s *SQLite) insertThread(ctx context.Context, id string, now int64, meta, status string) (int64, error) {
	res, err := s.st.insertThread.ExecContext(ctx, id, now, now, meta, status)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, cmp.Or(err, errThreadExists)
	}
	return res.LastInsertId()
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
func (s *SQLite) GetThread(ctx context.Context, id string) (Thread, error) {
	var t Thread
	var created, updated int64
	var meta string
	defer s.lockRead()()
	err := s.rq.QueryRowContext(ctx,
		`SELECT created_at, updated_at, metadata, status FROM threads WHERE id = ?`, id).
		Scan(&created, &updated, &meta, &t.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return Thread{}, fmt.Errorf("thread %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Thread{}, fmt.Errorf("store: get thread %q: %w", id, err)
	}
	t.ID = id
	t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
	t.Metadata = json.RawMessage(meta)
	return t, nil
}

// deleteThreadStatements delete a thread (its pk is the one argument) and
// everything that belongs to it, children first.
var deleteThreadStatements = []string{
	`DELETE FROM history WHERE thread = ?`,
	`DELETE FROM runs WHERE thread = ?`,
	`DELETE FROM threads WHERE pk = ?`,
}

// DeleteThread deletes a thread with its runs, messages, checkpoint and
// events. It fails with ErrBusy while the thread has a running run.
func (s *SQLite) DeleteThread(ctx context.Context, id string) error {
	return s.write(ctx, func(ctx context.Context) error {
		var pk int64
		var running bool
		err := s.conn.QueryRowContext(ctx, `SELECT pk, EXISTS(SELECT 1 FROM runs WHERE thread = t.pk AND status = 'running')
			FROM threads t WHERE t.id = ?`, id).Scan(&pk, &running)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("thread %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("store: delete thread %q: %w", id, err)
		}
		if running {
			return fmt.Errorf("thread %q: %w: cancel it or wait for it to finish, then delete", id, ErrBusy)
		}
		for _, stmt := range deleteThreadStatements {
			if _, err := s.conn.ExecContext(ctx, stmt, pk); err != nil {
				return fmt.Errorf("store: delete thread %q: %w", id, err)
			}
		}
		return nil
	})
}
