package dawn

import (
	"net/http"
	"strconv"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// auditPage is GET /audit's answer.
type auditPage struct {
	Entries []store.AuditEntry `json:"entries"`
	// Next is the after= of the next page; absent on the last.
	Next *int64 `json:"next,omitempty"`
}

// listAudit answers GET /audit?after=ID&limit=N: the audit log, oldest
// first, a page at a time, for the service credential.
func (s *api) listAudit(c echo.Context) error {
	if err := s.serviceOnly(c, "read the audit log"); err != nil {
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
	entries, err := s.host.AuditLog(c.Request().Context(), q)
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
