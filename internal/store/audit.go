package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// AuditEntry is one entry of the audit log: who did what to which thread,
// when, and how it ended.
type AuditEntry struct {
	// ID orders the entries; the store assigns it.
	ID int64     `json:"id"`
	At time.Time `json:"at"`
	// Action is what was done: "approval", "cancel", "delete", "signal".
	Action   string `json:"action"`
	ThreadID string `json:"thread_id,omitempty"`
	// User names the user who did it; Service marks the service
	// credential; neither, a server without authentication.
	User    string `json:"user,omitempty"`
	Service bool   `json:"service,omitempty"`
	// Outcome is how it ended: "ok", or what refused it.
	Outcome string `json:"outcome"`
	// Detail is the action's own data (the decision, the endpoint, the
	// HTTP status), a JSON object.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// AuditQuery pages the audit log: the entries after the id After, oldest
// first, at most Limit (default 100, at most 1000).
type AuditQuery struct {
	After int64
	Limit int
}

// MaxAuditPage bounds AuditQuery.Limit.
const MaxAuditPage = 1000

// AppendAudit appends e to the audit log (its ID is assigned; a zero At
// is now).
func (s *DB) AppendAudit(ctx context.Context, e AuditEntry) error {
	if e.Action == "" {
		return fmt.Errorf("audit entry: %w: the action is required", ErrInvalid)
	}
	detail := "{}"
	if len(e.Detail) > 0 {
		if !json.Valid(e.Detail) {
			return fmt.Errorf("audit entry: %w: detail must be JSON", ErrInvalid)
		}
		detail = string(e.Detail)
	}
	at := e.At.UnixNano()
	if e.At.IsZero() {
		at = s.now()
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		return tx.InsertAudit(ctx, dialect.AuditRow{At: at, Action: e.Action, ThreadID: e.ThreadID, User: e.User, Service: e.Service, Outcome: e.Outcome, Detail: detail})
	})
}

// Audit returns a page of the audit log.
func (s *DB) Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = 100
	case limit > MaxAuditPage:
		return nil, fmt.Errorf("limit %d: %w: at most %d", limit, ErrInvalid, MaxAuditPage)
	}
	out := []AuditEntry{}
	err := s.d.Audit(ctx, q.After, limit, func(r dialect.AuditRow) error {
		out = append(out, AuditEntry{ID: r.ID, At: time.Unix(0, r.At).UTC(), Action: r.Action, ThreadID: r.ThreadID, User: r.User, Service: r.Service, Outcome: r.Outcome, Detail: json.RawMessage(r.Detail)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read the audit log: %w", err)
	}
	return out, nil
}

// DeleteAppValues deletes the app values with keys, in one transaction;
// keys that are not there are no error.
func (s *DB) DeleteAppValues(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		for _, k := range keys {
			if err := tx.DeleteAppValue(ctx, k); err != nil {
				return fmt.Errorf("store: delete app value %q: %w", k, err)
			}
		}
		return nil
	})
}
