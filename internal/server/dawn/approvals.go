package server

import (
	"encoding/json"
	"net/http"
	"sort"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/labstack/echo/v4"
)

// remembered is one decision the app remembers, such as an "always" given
// to a tool's approval: the key its capability chose, whose it is, and the
// value.
type remembered struct {
	Key string `json:"key"`
	// User is the user it was given by and applies to; absent for a
	// decision of the whole app (the service credential's, or one given
	// without authentication), which applies to everyone.
	User  string          `json:"user,omitempty"`
	Value json.RawMessage `json:"value"`
}

// listApprovals answers GET /approvals: the remembered decisions the
// caller may see: a user their own and the whole app's, the service
// credential (or anyone without authentication) every one.
func (s *Server) listApprovals(c echo.Context) error {
	values, err := s.runs.Store().AppValues(c.Request().Context())
	if err != nil {
		return err
	}
	id, authed := capabilities.IdentityFrom(c.Request().Context())
	all := !authed || id.Service
	out := []remembered{}
	for stored, v := range values {
		user, key := runner.SplitUserKey(stored)
		if all || user == "" || user == id.User {
			out = append(out, remembered{Key: key, User: user, Value: json.RawMessage(v)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].User != out[j].User {
			return out[i].User < out[j].User
		}
		return out[i].Key < out[j].Key
	})
	return c.JSON(http.StatusOK, map[string]any{"approvals": out})
}

// revokeApproval answers DELETE /approvals/:key?user=U: it forgets a
// remembered decision, so the next call asks again. A user revokes their
// own (user= is theirs or left out); the service credential any user's,
// or the whole app's without user=. 404 when there is no such decision.
func (s *Server) revokeApproval(c echo.Context) error {
	key := c.Param("key")
	user := c.QueryParam("user")
	id, authed := capabilities.IdentityFrom(c.Request().Context())
	if authed && !id.Service {
		switch {
		case user == "":
			user = id.User
		case user != id.User:
			return newError(http.StatusNotFound, "approval_not_found", "no remembered decision "+key+" of yours")
		}
	}
	stored := key
	if user != "" {
		stored = runner.UserKey(user, key)
	}
	ctx := c.Request().Context()
	values, err := s.runs.Store().AppValues(ctx)
	if err != nil {
		return err
	}
	if _, ok := values[stored]; !ok {
		return newError(http.StatusNotFound, "approval_not_found", "no remembered decision "+key+" for "+whose(user)+"; GET /approvals lists them")
	}
	if err := s.runs.Store().DeleteAppValues(ctx, []string{stored}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// whose names the owner of a remembered decision in messages.
func whose(user string) string {
	if user == "" {
		return "the whole app"
	}
	return "user " + user
}
