package agent

import (
	"context"

	"github.com/dawn-go/dawn/capabilities"
)

// userOf names the user whose request started the run ctx belongs to, for
// the route prompt's {{ .User }}: "" without authentication or for the
// service credential. The identity reaches the loop on the run's context,
// which the runner derives from the request's, and tool calls get it the
// same way (capabilities.IdentityFrom).
func userOf(ctx context.Context) string {
	id, _ := capabilities.IdentityFrom(ctx)
	return id.User
}
