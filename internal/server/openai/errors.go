package openai

import (
	"net/http"
	"strings"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

// apiError is an error in OpenAI's shape, with the request field it is
// about (Param), as the endpoint's own checks find it.
type apiError struct {
	Status int
	Type   string
	Code   string
	Param  string
	Msg    string
}

func (e *apiError) Error() string { return e.Msg }

// invalid is a 400 invalid_request_error about request field param.
func invalid(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_value", Param: param, Msg: msg}
}

// errorBody is OpenAI's error body: {"error":{"message","type","param","code"}}.
type errorBody struct {
	Error errorFields `json:"error"`
}

type errorFields struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (e *apiError) body() errorBody {
	return errorBody{Error: errorFields{Message: e.Msg, Type: e.Type, Param: strOrNil(e.Param), Code: strOrNil(e.Code)}}
}

// shapeCore is how errors the core answers for this wire (a busy thread, a
// body over the limit, a store that is down) are written: in OpenAI's
// shape, with Dawn's kind as the code.
func shapeCore(b wire.ErrorBody) any {
	code := b.Error.Kind
	if code == "route_not_found" {
		code = "model_not_found"
	}
	return errorBody{Error: errorFields{Message: b.Error.Message, Type: errorType(code), Code: strOrNil(code)}}
}

// errorType is OpenAI's error type for Dawn's error kind.
func errorType(kind string) string {
	switch {
	case kind == "unauthorized":
		return "authentication_error"
	case kind == "overloaded":
		return "rate_limit_error"
	case strings.HasPrefix(kind, "invalid") || strings.HasPrefix(kind, "body_") || kind == "model_not_found" ||
		kind == "run_in_flight" || kind == "interrupt_pending" || kind == "not_found" || kind == "method_not_allowed" || kind == "thread_not_found":
		return "invalid_request_error"
	}
	return "server_error"
}

// serve adapts h: an *apiError it returns is written here, in OpenAI's
// shape; any other error goes to the core, which writes it through
// shapeCore.
func serve(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := h(c)
		if ae, ok := err.(*apiError); ok && !c.Response().Committed {
			return c.JSON(ae.Status, ae.body())
		}
		return err
	}
}
