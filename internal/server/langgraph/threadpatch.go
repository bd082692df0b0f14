package langgraph

import (
	"encoding/json"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// patchThread is PATCH /threads/:id: the body's metadata is merged into
// the thread's (its members set, the others kept), as LangGraph updates
// a thread, and its ttl, when given, becomes the thread's; the answer is
// the thread as GET /threads/:id shows it. Either way the update starts
// the clock of a thread's ttl again.
func (s *dialect) patchThread(c echo.Context) error {
	var body struct {
		Metadata json.RawMessage `json:"metadata"`
		TTL      json.RawMessage `json:"ttl"`
	}
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	ttl, err := wire.ThreadTTL(body.TTL)
	if err != nil {
		return err
	}
	if isNull(body.Metadata) {
		body.Metadata = json.RawMessage(`{}`)
	}
	if body.Metadata[0] != '{' {
		return wire.BadBody(`metadata must be a JSON object such as {"user":"ann"}`)
	}
	ctx := c.Request().Context()
	if _, err := s.host.PatchThreadMetadata(ctx, c.Param("id"), body.Metadata); err != nil {
		return err
	}
	if ttl > 0 {
		if _, err := s.host.SetThreadTTL(ctx, c.Param("id"), ttl); err != nil {
			return err
		}
	}
	return s.getThread(c)
}
