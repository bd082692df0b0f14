package capabilities

import "context"

// Identity is who sent a request: a user named by the server's
// authentication (a JWT's user claim, or what an app's own authenticator
// returns), or the service credential (DAWN_API_KEY), which sees every
// thread. A server without authentication attaches none.
type Identity struct {
	// User names the user; threads a user creates belong to them.
	User string `json:"user,omitempty"`
	// Service is set for the service credential: it sees and may act on
	// every user's threads.
	Service bool `json:"service,omitempty"`
	// Claims are the verified claims of the user's token, when a token
	// named them; nil otherwise.
	Claims map[string]any `json:"claims,omitempty"`
}

// Sees reports whether the identity may see a thread owned by owner: the
// service credential sees every thread, a user their own; a thread with no
// owner (created while the server had no authentication, or by the
// service credential) is the service's alone once users exist.
func (id Identity) Sees(owner string) bool {
	return id.Service || (id.User != "" && id.User == owner)
}

type identityKey struct{}

// WithIdentity returns ctx carrying id, as the server attaches a request's
// identity and the runtime hands it on to the run's tool calls.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity ctx carries; ok is false when the
// server has no authentication or ctx is not a request's or a run's.
func IdentityFrom(ctx context.Context) (id Identity, ok bool) {
	id, ok = ctx.Value(identityKey{}).(Identity)
	return id, ok
}
