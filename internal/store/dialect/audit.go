package dialect

import "context"

// AuditRow is one entry of the audit log; At is Unix nanoseconds.
type AuditRow struct {
	ID                     int64
	At                     int64
	Action, ThreadID, User string
	Service                bool
	Outcome, Detail        string
}

// AuditReader reads the audit log: the entries with id above after, in id
// order, at most limit of them.
type AuditReader interface {
	Audit(ctx context.Context, after int64, limit int, each func(AuditRow) error) error
}

// AuditWriter appends to the audit log and deletes app values.
type AuditWriter interface {
	InsertAudit(ctx context.Context, r AuditRow) error
	// DeleteAppValue deletes an app value; deleting one that is not there
	// is no error.
	DeleteAppValue(ctx context.Context, key string) error
}
