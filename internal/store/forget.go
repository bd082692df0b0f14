package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Erasure names a person to forget (ForgetUser): the owner of their
// threads and crons, the namespace under which their store items live
// and the key prefix of their app values.
type Erasure struct {
	User          string
	ItemNamespace []string
	AppKeyPrefix  string
}

// Forgetter is a store that can forget a person.
type Forgetter interface {
	// ForgetUser deletes, in one transaction, everything e's person owns:
	// their threads with every run, event, checkpoint, branch, tool
	// output, queued run and webhook delivery of those threads; their
	// crons; their store items (memories included); their app values
	// (decisions remembered for them); and the audit entries they made
	// or that name their threads. It appends audit, with the counts by
	// table set as its detail's "counts", in the same transaction, and
	// returns the counts. Forgetting a person with nothing left is no
	// error: the counts are zero.
	ForgetUser(ctx context.Context, e Erasure, audit AuditEntry) (map[string]int, error)
}

var _ Forgetter = (*DB)(nil)

// ForgetUser implements Forgetter.
func (s *DB) ForgetUser(ctx context.Context, e Erasure, audit AuditEntry) (map[string]int, error) {
	if e.User == "" || len(e.ItemNamespace) == 0 || e.AppKeyPrefix == "" {
		return nil, fmt.Errorf("forget user: %w: the user, their item namespace and their app key prefix are required", ErrInvalid)
	}
	detail := map[string]json.RawMessage{}
	if len(audit.Detail) > 0 && json.Unmarshal(audit.Detail, &detail) != nil {
		return nil, fmt.Errorf("forget user: %w: the audit detail must be a JSON object", ErrInvalid)
	}
	var counts map[string]int
	err := s.write(ctx, func(tx dialect.Tx) error {
		er, ok := tx.(dialect.Eraser)
		if !ok {
			return fmt.Errorf("%w: this store cannot forget a user", ErrInvalid)
		}
		var err error
		counts, err = er.Erase(ctx, dialect.Erasure{Owner: e.User, ItemPrefix: encodeNamespace(e.ItemNamespace), AppKeyPrefix: e.AppKeyPrefix})
		if err != nil {
			return err
		}
		detail["counts"], _ = json.Marshal(counts)
		raw, _ := json.Marshal(detail)
		return tx.InsertAudit(ctx, dialect.AuditRow{At: s.now(), Action: audit.Action, User: audit.User, Service: audit.Service, Outcome: audit.Outcome, Detail: string(raw)})
	})
	if err != nil {
		return nil, fmt.Errorf("store: forget a user: %w", err)
	}
	return counts, nil
}

// PeekerOf returns the database under s, for tools and tests that read
// what is stored (dialect.Peeker), and whether it is Postgres; ok is false
// for a store that is not a DB.
func PeekerOf(s Store) (p dialect.Peeker, postgres, ok bool) {
	var db *DB
	switch s := s.(type) {
	case *DB:
		db = s
	case *sharedDB:
		db, postgres = s.DB, true
	default:
		return nil, false, false
	}
	p, ok = db.d.(dialect.Peeker)
	return p, postgres, ok
}
