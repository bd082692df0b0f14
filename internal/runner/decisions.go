package runner

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/telemetry"
	"github.com/dawn-go/dawn/thread"
)

// userOf names the user ctx's identity names: "" without authentication
// and for the service credential.
func userOf(ctx context.Context) string {
	id, _ := capabilities.IdentityFrom(ctx)
	if id.Service {
		return ""
	}
	return id.User
}

// recordDecisions appends to the thread's decisions (saved, the
// capabilities.DecisionsKey value) one per answer of adm's resume, naming
// who answered (ctx's identity) and when, and keeps the latest
// capabilities.MaxDecisions.
func recordDecisions(ctx context.Context, saved json.RawMessage, adm *admission, at time.Time) json.RawMessage {
	var list []capabilities.Decision
	if len(saved) > 0 {
		_ = json.Unmarshal(saved, &list) // a value that is not a list starts anew
	}
	kinds := map[string]capabilities.Interrupt{}
	for _, in := range adm.pending {
		kinds[in.ID] = in
	}
	by := capabilities.DeciderOf(capabilities.IdentityFrom(ctx))
	for _, a := range adm.answers {
		in := kinds[a.InterruptID]
		list = append(list, capabilities.Decision{InterruptID: a.InterruptID, Kind: in.Kind, CallID: in.CallID, Status: a.Status, Payload: a.Payload, By: by, At: at.UTC()})
	}
	if len(list) > capabilities.MaxDecisions {
		list = list[len(list)-capabilities.MaxDecisions:]
	}
	return mustJSON(list)
}

// UserPrefix begins the app values the runtime keeps for one user: a
// resume's remembered values ("always" decisions) are the answering user's
// own when the server's authentication names users, so one user's
// "always" never lets a tool run unasked for another. The service
// credential, and a server without authentication, remember for the whole
// app.
const UserPrefix = "user/"

// UserKey is the app-value key under which key is remembered for user.
func UserKey(user, key string) string {
	return UserPrefix + url.PathEscape(user) + "/" + key
}

// SplitUserKey returns the user and key of a stored app-value key; user is
// "" for a value of the whole app.
func SplitUserKey(stored string) (user, key string) {
	rest, ok := strings.CutPrefix(stored, UserPrefix)
	if !ok {
		return "", stored
	}
	esc, key, ok := strings.Cut(rest, "/")
	if !ok {
		return "", stored
	}
	user, err := url.PathUnescape(esc)
	if err != nil {
		return "", stored
	}
	return user, key
}

// scopeRemembered returns the values a resume remembers, under the
// answering user's keys when ctx names a user.
func scopeRemembered(ctx context.Context, values map[string]json.RawMessage) map[string]json.RawMessage {
	user := userOf(ctx)
	if user == "" || len(values) == 0 {
		return values
	}
	out := make(map[string]json.RawMessage, len(values))
	for k, v := range values {
		out[UserKey(user, k)] = v
	}
	return out
}

// rememberedFor is what a run of user sees of the app's stored values:
// the whole app's, with user's own over them; other users' are hidden.
func rememberedFor(stored thread.State, user string) thread.State {
	out := thread.State{}
	for k, v := range stored {
		if owner, _ := SplitUserKey(k); owner == "" {
			out[k] = v
		}
	}
	if user == "" {
		return out
	}
	for k, v := range stored {
		if owner, key := SplitUserKey(k); owner == user {
			out[key] = v
		}
	}
	return out
}

// Audit appends e to the audit log with the identity ctx carries, and
// exports it as an OpenTelemetry log record when logs are exported. An
// entry the store cannot keep is logged: the action it records has
// already happened.
func (m *Manager) Audit(ctx context.Context, e store.AuditEntry) {
	if id, ok := capabilities.IdentityFrom(ctx); ok {
		e.User, e.Service = id.User, id.Service
	}
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	if err := m.audit.AppendAudit(context.WithoutCancel(ctx), e); err != nil {
		m.logger.Error("cannot append to the audit log", "action", e.Action, "thread", e.ThreadID, "user", e.User, "err", err)
	}
	m.tel.Audit(ctx, telemetry.AuditRecord{At: e.At, Action: e.Action, ThreadID: e.ThreadID, User: e.User, Service: e.Service, Outcome: e.Outcome, Detail: string(e.Detail)})
}

// auditDecisions appends one approval entry per answer of adm's resume.
func (m *Manager) auditDecisions(ctx context.Context, threadID string, adm *admission) {
	kinds := map[string]capabilities.Interrupt{}
	for _, in := range adm.pending {
		kinds[in.ID] = in
	}
	for _, a := range adm.answers {
		detail := map[string]any{"interruptId": a.InterruptID, "kind": kinds[a.InterruptID].Kind, "status": a.Status}
		if len(a.Payload) > 0 {
			detail["payload"] = a.Payload
		}
		m.Audit(ctx, store.AuditEntry{Action: "approval", ThreadID: threadID, Outcome: a.Status, Detail: mustJSON(detail)})
	}
}
