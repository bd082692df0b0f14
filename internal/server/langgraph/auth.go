package langgraph

import (
	"context"
	"maps"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
)

// authPrefix marks the keys of config.configurable that LangGraph's server
// fills from the request's authentication; a client cannot set them.
const authPrefix = "langgraph_auth_"

// authConfig is a run's config as LangGraph's server records it: the
// client's config, with config.configurable.langgraph_auth_user (the user
// object: identity, display_name, is_authenticated, permissions),
// langgraph_auth_user_id and langgraph_auth_permissions set from the
// identity the server authenticated, and any such keys the client sent
// dropped, so that a client cannot speak for another user.
func authConfig(ctx context.Context, cfg lgConfig) lgConfig {
	out := lgConfig{Configurable: map[string]any{}}
	maps.Copy(out.Configurable, cfg.Configurable)
	for k := range out.Configurable {
		if strings.HasPrefix(k, authPrefix) {
			delete(out.Configurable, k)
		}
	}
	id, ok := capabilities.IdentityFrom(ctx)
	if !ok {
		return out
	}
	name := id.User
	if id.Service {
		name = "service"
	}
	perms := []string{}
	if id.Service {
		perms = append(perms, "service")
	}
	out.Configurable[authPrefix+"user"] = map[string]any{"identity": name, "display_name": name, "is_authenticated": true, "permissions": perms}
	out.Configurable[authPrefix+"user_id"] = name
	out.Configurable[authPrefix+"permissions"] = perms
	return out
}
