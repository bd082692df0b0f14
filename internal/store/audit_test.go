package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestAuditLog: entries appended to the audit log come back in order, a
// page at a time after an id, with who, when and what, from a store opened
// again on the same database.
func TestAuditLog(t *testing.T) {
	eachDurable(t, func(t *testing.T, open func() Store) {
		ctx := context.Background()
		s := open()
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for _, e := range []AuditEntry{
			{At: at, Action: "approval", ThreadID: "t1", User: "alice", Outcome: "ok", Detail: json.RawMessage(`{"payload":"once"}`)},
			{Action: "cancel", ThreadID: "t1", Service: true, Outcome: "ok"},
			{Action: "delete", ThreadID: "t2", Outcome: "error"},
		} {
			must(t, s.AppendAudit(ctx, e))
		}
		if err := s.AppendAudit(ctx, AuditEntry{ThreadID: "t"}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("an entry with no action: %v, want ErrInvalid", err)
		}
		again := open()
		first, err := again.Audit(ctx, AuditQuery{Limit: 2})
		must(t, err)
		if len(first) != 2 || first[0].Action != "approval" || first[0].User != "alice" || !first[0].At.Equal(at) || string(first[0].Detail) != `{"payload":"once"}` ||
			first[1].Action != "cancel" || !first[1].Service || first[1].At.IsZero() {
			t.Fatalf("first page = %+v", first)
		}
		rest, err := again.Audit(ctx, AuditQuery{After: first[1].ID})
		must(t, err)
		if len(rest) != 1 || rest[0].Action != "delete" || rest[0].ThreadID != "t2" || rest[0].ID <= first[1].ID {
			t.Fatalf("second page = %+v", rest)
		}
		if _, err := again.Audit(ctx, AuditQuery{Limit: MaxAuditPage + 1}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("limit over the maximum: %v", err)
		}
	})
}

// TestDeleteAppValues: deleted app values are gone, others stay, and a
// key that is not there is no error.
func TestDeleteAppValues(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		must(t, s.SetAppValues(ctx, map[string]json.RawMessage{"a": json.RawMessage(`true`), "b": json.RawMessage(`true`)}))
		must(t, s.DeleteAppValues(ctx, []string{"a", "missing"}))
		got, err := s.AppValues(ctx)
		must(t, err)
		if len(got) != 1 || got["b"] == nil {
			t.Fatalf("app values after delete = %v, want b alone", got)
		}
	})
}
