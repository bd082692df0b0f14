package langgraph

import (
	"encoding/json"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// patchThread is PATCH /threads/:id: the body's metadata is merged into
// the thread's (its members set, the others kept), as LangGraph updates
// a thread; the answer is the thread as GET /threads/:id shows it.
func (s *dialect) patchThread(c echo.Context) error {
	var body struct {
		Metadata json.RawMessage `json:"metadata"`
		TTL      json.RawMessage `json:"ttl"`
	}
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	if !isNull(body.TTL) {
		return wire.BadBody("ttl is not supported: Dawn keeps threads until DELETE /threads/:id")
	}
	if isNull(body.Metadata) {
		body.Metadata = json.RawMessage(`{}`)
	}
	if body.Metadata[0] != '{' {
		return wire.BadBody(`metadata must be a JSON object such as {"user":"ann"}`)
	}
	if _, err := s.host.PatchThreadMetadata(c.Request().Context(), c.Param("id"), body.Metadata); err != nil {
		return err
	}
	return s.getThread(c)
}
