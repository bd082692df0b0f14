package server

import (
	"encoding/json"
	"net/http"
	"strings"

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
