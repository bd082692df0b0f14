package dawn

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// resumeBody is the body of POST /threads/:id/resume. Unlike a run's body it
// is strict: an unknown field is a 400, so that a misspelt decision is never
// taken for another.
type resumeBody struct {
	Route  string              `json:"route"`
	Resume []wire.ResumeAnswer `json:"resume"`
	// Webhook is a URL the continued run is POSTed to when it ends.
	Webhook string `json:"webhook"`
}

const resumeExample = `{"route":"/ops","resume":[{"interruptId":"perm-…","status":"resolved","payload":"once"}]}`

// resume answers every pending interrupt of a parked thread and streams the
// run that goes on, as runs/stream does. A body that does not fit the
// pending interrupts is a 400 naming the interrupt, and changes nothing.
func (s *api) resume(c echo.Context) error {
	id := c.Param("id")
	if err := wire.CheckThreadID(id); err != nil {
		return err
	}
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return wire.BodyReadError(err)
	}
	dec := json.NewDecoder(bytes.NewReader(wire.TrimBOM(data)))
	dec.DisallowUnknownFields()
	var body resumeBody
	if err := dec.Decode(&body); err != nil {
		return newError(http.StatusBadRequest, "invalid_resume", "the resume body must be exactly "+resumeExample+": "+err.Error())
	}
	if dec.More() {
		return newError(http.StatusBadRequest, "invalid_resume", "the resume body must be one JSON object, like "+resumeExample)
	}
	if body.Route == "" {
		return newError(http.StatusBadRequest, "invalid_resume", "route is required: the route the thread parked on, like "+resumeExample)
	}
	if body.Resume == nil {
		return newError(http.StatusBadRequest, "invalid_resume", "resume is required: one answer per pending interrupt, like "+resumeExample)
	}
	answers := make([]capabilities.Answer, 0, len(body.Resume))
	for _, a := range body.Resume {
		answers = append(answers, a.Answer())
	}
	run, err := s.host.Resume(c.Request().Context(), runner.ResumeRequest{ThreadID: id, Route: body.Route, Answers: answers, Stream: true, Webhook: body.Webhook})
	if err != nil {
		return err
	}
	return s.writeStream(c, run.Log.Subscribe(0), run.ID)
}
