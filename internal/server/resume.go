package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/labstack/echo/v4"
)

// resumeBody is the body of POST /threads/:id/resume. Unlike a run's body it
// is strict: an unknown field is a 400, so that a misspelt decision is never
// taken for another.
type resumeBody struct {
	Route  string         `json:"route"`
	Resume []resumeAnswer `json:"resume"`
}

type resumeAnswer struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
}

const resumeExample = `{"route":"/ops","resume":[{"interruptId":"perm-…","status":"resolved","payload":"once"}]}`

// resume answers every pending interrupt of a parked thread and streams the
// run that goes on, as runs/stream does. A body that does not fit the
// pending interrupts is a 400 naming the interrupt, and changes nothing.
func (s *Server) resume(c echo.Context) error {
	id := c.Param("id")
	if err := checkThreadID(id); err != nil {
		return err
	}
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return bodyReadError(err)
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
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
		payload := a.Payload
		if string(bytes.TrimSpace(payload)) == "null" {
			payload = nil
		}
		// A missing interruptId is refused by the runner, which names
		// the pending interrupts the answer should have named.
		answers = append(answers, capabilities.Answer{InterruptID: a.InterruptID, Status: a.Status, Payload: payload})
	}
	run, err := s.runs.Resume(c.Request().Context(), runner.ResumeRequest{ThreadID: id, Route: body.Route, Answers: answers, Stream: true})
	if err != nil {
		return err
	}
	return s.writeStream(c, run.Log.Subscribe(0), run.ID)
}

// aguiResume answers a parked thread's interrupts from RunAgentInput.resume
// (each entry {"interruptId","status","payload"}, checked as strictly as
// POST /threads/:id/resume checks its body) and streams the run that goes
// on as AG-UI events.
func (s *Server) aguiResume(c echo.Context, in *aguiInput, key, threadID, runID string, route *capabilities.Prepared) error {
	answers := make([]capabilities.Answer, 0, len(in.Resume))
	for i, raw := range in.Resume {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var a resumeAnswer
		if err := dec.Decode(&a); err != nil {
			return newError(http.StatusBadRequest, "invalid_resume", fmt.Sprintf(`resume[%d] must be {"interruptId","status","payload"}: %v`, i, err))
		}
		// A missing interruptId is refused by the runner, naming the
		// pending interrupts.
		payload := a.Payload
		if string(bytes.TrimSpace(payload)) == "null" {
			payload = nil
		}
		answers = append(answers, capabilities.Answer{InterruptID: a.InterruptID, Status: a.Status, Payload: payload})
	}
	clientState, err := in.state()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	values, err := s.threadValues(ctx, threadID, route)
	if err != nil {
		return err
	}
	run, err := s.runs.Resume(ctx, runner.ResumeRequest{ThreadID: threadID, Route: key, Answers: answers, Stream: true})
	if err != nil {
		return err
	}
	tr := newAGUIStream(threadID, runID, run.ID, aguiFieldsOf(route, s.runs.App().Config.Markers))
	return s.writeAGUI(c, run, tr, tr.start(clientState, values))
}
