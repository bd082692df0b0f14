package wire

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Error is an API error: an HTTP status and a machine-readable kind. The
// core writes it as ErrorBody.
type Error struct {
	Status int
	Kind   string
	Msg    string
	// RetryAfter, when positive, is sent as the Retry-After header (in
	// seconds): when the client may try again.
	RetryAfter int
}

func (e *Error) Error() string { return e.Msg }

// NewError returns an Error.
func NewError(status int, kind, msg string) *Error {
	return &Error{Status: status, Kind: kind, Msg: msg}
}

// BadBody is the 400 invalid_body error with msg.
func BadBody(msg string) *Error {
	return NewError(http.StatusBadRequest, "invalid_body", msg)
}

// ErrorBody is Dawn's error shape:
// {"error":{"kind":…,"message":…,"details":{"code":…}}}. details.code
// repeats the kind, where Dawn clients look for it.
type ErrorBody struct {
	Error struct {
		Kind    string       `json:"kind"`
		Message string       `json:"message"`
		Details ErrorDetails `json:"details"`
	} `json:"error"`
}

// ErrorDetails are an ErrorBody's details.
type ErrorDetails struct {
	Code string `json:"code"`
}

// errorShapeKey holds the ShapeErrors function of a request.
const errorShapeKey = "dawn.wire.errorShape"

// ShapeErrors returns middleware under which the errors of a request are
// written as shape returns them, for a wire whose clients read more than
// Dawn's error body (shape gets Dawn's, and may embed it).
func ShapeErrors(shape func(ErrorBody) any) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Set(errorShapeKey, shape)
			return next(c)
		}
	}
}

// Shaped returns body as the request's wire writes its errors (see
// ShapeErrors): body itself when no wire set a shape.
func Shaped(c echo.Context, body ErrorBody) any {
	if shape, ok := c.Get(errorShapeKey).(func(ErrorBody) any); ok {
		return shape(body)
	}
	return body
}
