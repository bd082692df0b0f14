// Package ownership decides whose threads a request or a run may reach,
// from the capabilities.Identity its context carries: a request with no
// identity (a server without authentication) and the service credential
// reach every thread, a user the threads they own. The store keeps each
// thread's owner; the server, the runner and the wires ask this package.
// It imports nothing of the runtime.
package ownership

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
)

// nobody is the owner filter of an identity that names no user and is not
// the service: no thread is ever owned by it, so such a caller sees none.
const nobody = "\x00nobody"

// Owner returns the user whose threads ctx may reach, and scoped true; or
// "" and false when ctx reaches every thread (no identity, or the service
// credential). A thread or cron created for a scoped ctx belongs to owner.
func Owner(ctx context.Context) (owner string, scoped bool) {
	id, ok := capabilities.IdentityFrom(ctx)
	if !ok || id.Service {
		return "", false
	}
	if id.User == "" {
		return nobody, true
	}
	return id.User, true
}

// Sees reports whether ctx may reach a thread (or cron) owned by owner
// ("" for none): with no identity, every one; else as the identity sees
// it (capabilities.Identity.Sees).
func Sees(ctx context.Context, owner string) bool {
	id, ok := capabilities.IdentityFrom(ctx)
	return !ok || id.Sees(owner)
}

// As returns ctx acting for owner: the identity of that user, or ctx as
// it is when owner is "" (a cron or a thread that belongs to no user runs
// unscoped). The scheduler starts a cron's runs with it.
func As(ctx context.Context, owner string) context.Context {
	if owner == "" {
		return ctx
	}
	return capabilities.WithIdentity(ctx, capabilities.Identity{User: owner})
}

// Namespace returns the namespace of the item store that ns names for
// ctx: a user's items live under ["users", UserLabel(user)], so that each
// user has a store of their own; unscoped, ns as it is.
func Namespace(ctx context.Context, ns []string) []string {
	user, scoped := Owner(ctx)
	if !scoped {
		return ns
	}
	return append([]string{UsersLabel, UserLabel(user)}, ns...)
}

// UserLabel is user written as a namespace label: any user id the auth
// layer accepts (an email, say), though a label holds no period and no
// control character. Each period, percent sign and control character is
// written %XX (its byte in hex, upper case), so that the label reads back
// as the id (UserFromLabel) and two ids never share a label;
// "ada@example.com" is "ada@example%2Ecom".
func UserLabel(user string) string {
	if !strings.ContainsFunc(user, escapedInLabel) {
		return user
	}
	var b strings.Builder
	for i := 0; i < len(user); i++ {
		c := user[i]
		if c == '.' || c == '%' || c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// UserFromLabel is UserLabel undone.
func UserFromLabel(label string) (string, error) {
	return url.PathUnescape(label)
}

func escapedInLabel(r rune) bool { return r == '.' || r == '%' || r < 0x20 || r == 0x7f }

// Unnamespace is Namespace undone on a namespace the store returns; ok is
// false for a namespace outside ctx's items.
func Unnamespace(ctx context.Context, ns []string) (out []string, ok bool) {
	user, scoped := Owner(ctx)
	if !scoped {
		return ns, true
	}
	if len(ns) < 2 || ns[0] != UsersLabel || ns[1] != UserLabel(user) {
		return nil, false
	}
	return ns[2:], true
}

// UsersLabel is the first label of every user's items in the item store.
const UsersLabel = "users"
