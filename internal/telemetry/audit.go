package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
)

// Attribute keys of audit log records.
const (
	AttrAuditAction  = attribute.Key("dawn.audit.action")
	AttrAuditOutcome = attribute.Key("dawn.audit.outcome")
	AttrUser         = attribute.Key("enduser.id")
	AttrService      = attribute.Key("dawn.auth.service")
)

// AuditEvent is the event name of the log record of an audit entry.
const AuditEvent = "dawn.audit"

// AuditRecord is an entry of the audit log as Audit exports it.
type AuditRecord struct {
	At                              time.Time
	Action, ThreadID, User, Outcome string
	Service                         bool
	// Detail is the entry's JSON detail, the record's body.
	Detail string
}

// Audit exports an audit entry as an OpenTelemetry log record (event
// dawn.audit, with the action, thread, user and outcome as attributes and
// the detail as its body), when logs are exported; otherwise it does
// nothing.
func (t *Telemetry) Audit(ctx context.Context, a AuditRecord) {
	if t == nil || t.audit == nil {
		return
	}
	var r otellog.Record
	r.SetEventName(AuditEvent)
	r.SetTimestamp(a.At)
	r.SetObservedTimestamp(time.Now())
	r.SetSeverity(otellog.SeverityInfo)
	r.SetSeverityText("INFO")
	r.SetBody(attribute.StringValue(a.Detail))
	r.AddAttributes(AttrAuditAction.String(a.Action), AttrThread.String(a.ThreadID), AttrAuditOutcome.String(a.Outcome))
	if a.User != "" {
		r.AddAttributes(AttrUser.String(a.User))
	}
	if a.Service {
		r.AddAttributes(AttrService.Bool(true))
	}
	t.audit.Emit(ctx, r)
}
