package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// defaultAudited maps "METHOD path" (echo's route pattern) to the action the
// audit log records for a call of the endpoint: cancels and deletes on
// every wire, and each capability's thread endpoints that act (the
// harness's plan pause, resume and cancel), added by mountCapabilities.
// Approvals are recorded by the runner, where every wire's answers meet.
var defaultAudited = map[string]string{
	http.MethodDelete + " /threads/:id":                "delete",
	http.MethodPost + " /threads/:id/cancel":           "cancel",
	http.MethodPost + " /threads/:id/runs/:run/cancel": "cancel",
	http.MethodDelete + " /approvals/:key":             "revoke",
}

// auditCalls appends an entry to the audit log for each call of an
// audited endpoint, once it is answered, with the caller's identity, the
// thread and the outcome ("ok" for a 2xx answer, else the error's kind).
func (s *Server) auditCalls(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The record is made in a function of its own, as requireJSON's
		// check.
		err := next(c)
		s.audit(c, err)
		return err
	}
}

// audit records the call c answered, with err, when its action is audited.
func (s *Server) audit(c echo.Context, err error) {
	req := c.Request()
	action := s.audited[req.Method+" "+c.Path()]
	if action == "" {
		return
	}
	status, outcome := c.Response().Status, "ok"
	if err != nil {
		ae := classify(err)
		status, outcome = ae.Status, ae.Kind
	} else if status >= 300 {
		outcome = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	}
	detail := map[string]any{"method": req.Method, "path": req.URL.Path, "status": status}
	if run := c.Param("run"); run != "" {
		detail["run_id"] = run
	}
	if key := c.Param("key"); key != "" {
		detail["key"] = key
	}
	data, _ := json.Marshal(detail)
	s.runs.Audit(req.Context(), store.AuditEntry{Action: action, ThreadID: c.Param("id"), Outcome: outcome, Detail: data})
}

// serviceOnly refuses a user with 403: only the service credential (or
// anyone, on a server without authentication) may call the endpoint,
// which does what.
func serviceOnly(c echo.Context, what string) error {
	id, ok := capabilities.IdentityFrom(c.Request().Context())
	if ok && !id.Service {
		return newError(http.StatusForbidden, "forbidden", "only the service credential (DAWN_API_KEY) may "+what)
	}
	return nil
}

// auditPage is GET /audit's answer.
type auditPage struct {
	Entries []store.AuditEntry `json:"entries"`
	// Next is the after= of the next page; absent on the last.
	Next *int64 `json:"next,omitempty"`
}

// listAudit answers GET /audit?after=ID&limit=N: the audit log, oldest
// first, a page at a time, for the service credential.
func (s *Server) listAudit(c echo.Context) error {
	if err := serviceOnly(c, "read the audit log"); err != nil {
		return err
	}
	q := store.AuditQuery{}
	var err error
	if v := c.QueryParam("after"); v != "" {
		if q.After, err = strconv.ParseInt(v, 10, 64); err != nil || q.After < 0 {
			return newError(http.StatusBadRequest, "invalid_input", "after must be the id of an audit entry (a whole number), like after=42")
		}
	}
	if v := c.QueryParam("limit"); v != "" {
		if q.Limit, err = strconv.Atoi(v); err != nil || q.Limit < 1 || q.Limit > store.MaxAuditPage {
			return newError(http.StatusBadRequest, "invalid_input", "limit must be a whole number from 1 to "+strconv.Itoa(store.MaxAuditPage))
		}
	}
	entries, err := s.runs.Store().Audit(c.Request().Context(), q)
	if err != nil {
		return err
	}
	page := auditPage{Entries: entries}
	limit := q.Limit
	if limit == 0 {
		limit = 100
	}
	if len(entries) == limit {
		next := entries[len(entries)-1].ID
		page.Next = &next
	}
	return c.JSON(http.StatusOK, page)
}
