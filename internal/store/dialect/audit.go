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

// AppReader reads what the app keeps across threads: its values, and
// the audit log.
type AppReader interface {
	AppValues(ctx context.Context, each func(key, value string) error) error
	// Audit reads the entries of the audit log with id above after, in
	// id order, at most limit of them.
	Audit(ctx context.Context, after int64, limit int, each func(AuditRow) error) error
}

// AppTx writes what the app keeps across threads in a transaction: its
// values, and the audit log.
type AppTx interface {
	SetAppValue(ctx context.Context, key, value string, now int64) error
	// DeleteAppValue deletes an app value; deleting one that is not there
	// is no error.
	DeleteAppValue(ctx context.Context, key string) error
	InsertAudit(ctx context.Context, r AuditRow) error
}
