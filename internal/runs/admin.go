package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/webhook"
)

// What only the service credential may do (read the audit log, forget a
// user), whose remembered decisions a caller sees and revokes, and which
// webhook deliveries it reads, are decided here, whichever wire asks.

// ErrServiceOnly refuses a user what only the service credential (or
// anyone, on a server without authentication) may do.
var ErrServiceOnly = errors.New("only the service credential may do this")

// ErrOthersDecision refuses a user the revocation of another user's
// remembered decision.
var ErrOthersDecision = errors.New("the remembered decision is another user's")

// ServiceOnly returns nil when ctx is the service credential's, or has
// no identity (a server without authentication), ErrServiceOnly when it
// is a user's.
func (s *Service) ServiceOnly(ctx context.Context) error {
	if id, ok := capabilities.IdentityFrom(ctx); ok && !id.Service {
		return ErrServiceOnly
	}
	return nil
}

// AuditLog is a page of the audit log, for the service credential.
func (s *Service) AuditLog(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, error) {
	if err := s.ServiceOnly(ctx); err != nil {
		return nil, err
	}
	return s.audit.Audit(ctx, q)
}

// ForgetUser erases everything user owns (runner.Manager.ForgetUser), for
// the service credential.
func (s *Service) ForgetUser(ctx context.Context, user string) (runner.Forgotten, error) {
	if err := s.ServiceOnly(ctx); err != nil {
		return runner.Forgotten{}, err
	}
	return s.m.ForgetUser(ctx, user)
}

// WebhookDelivery is how the webhook of run runID went, as the store
// records it; a run ctx may not see has none.
func (s *Service) WebhookDelivery(ctx context.Context, runID string) (webhook.Delivery, error) {
	if err := s.RunVisible(ctx, runID); err != nil {
		return webhook.Delivery{}, err
	}
	return s.m.WebhookDelivery(ctx, runID)
}

// Decision is one decision the app remembers, such as an "always" given
// to a tool's approval: the key its capability chose, whose it is, and
// the value.
type Decision struct {
	Key string `json:"key"`
	// User is the user it was given by and applies to; absent for a
	// decision of the whole app (the service credential's, or one given
	// without authentication), which applies to everyone.
	User  string          `json:"user,omitempty"`
	Value json.RawMessage `json:"value"`
}

// Decisions are the remembered decisions ctx may see, by user then key:
// a user their own and the whole app's, the service credential (or
// anyone without authentication) every one.
func (s *Service) Decisions(ctx context.Context) ([]Decision, error) {
	values, err := s.values.AppValues(ctx)
	if err != nil {
		return nil, err
	}
	id, authed := capabilities.IdentityFrom(ctx)
	all := !authed || id.Service
	out := []Decision{}
	for stored, v := range values {
		user, key := runner.SplitUserKey(stored)
		if all || user == "" || user == id.User {
			out = append(out, Decision{Key: key, User: user, Value: json.RawMessage(v)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].User != out[j].User {
			return out[i].User < out[j].User
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// RevokeDecision forgets the remembered decision key of user, so the next
// call asks again, and returns whose it was ("" for the whole app's). A
// user revokes their own (user is theirs or ""), and is refused another's
// with ErrOthersDecision; the service credential revokes any user's, or
// the whole app's with user "". A decision that is not remembered is
// store.ErrNotFound.
func (s *Service) RevokeDecision(ctx context.Context, user, key string) (string, error) {
	if id, authed := capabilities.IdentityFrom(ctx); authed && !id.Service {
		switch {
		case user == "":
			user = id.User
		case user != id.User:
			return user, ErrOthersDecision
		}
	}
	stored := key
	if user != "" {
		stored = runner.UserKey(user, key)
	}
	values, err := s.values.AppValues(ctx)
	if err != nil {
		return user, err
	}
	if _, ok := values[stored]; !ok {
		return user, fmt.Errorf("remembered decision %q: %w", key, store.ErrNotFound)
	}
	return user, s.values.DeleteAppValues(ctx, []string{stored})
}
