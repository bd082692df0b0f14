package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// ErrBodyTimeout is wrapped by the error of a body read that ran past the
// server's body timeout.
var ErrBodyTimeout = errors.New("request body did not arrive in time")

// bom is the UTF-8 byte order mark some editors and tools write before
// JSON.
var bom = []byte("\xef\xbb\xbf")

// TrimBOM drops a UTF-8 byte order mark from the start of data.
func TrimBOM(data []byte) []byte { return bytes.TrimPrefix(data, bom) }

// Decode reads a JSON body into v; an empty body leaves v as it is. Errors
// are 400 (or 413, 408) with a message saying what is wrong.
func Decode(c echo.Context, v any) error {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return BodyReadError(err)
	}
	data = TrimBOM(data)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return BadBody("request body is not the JSON this endpoint expects: " + JSONError(err, "the body"))
	}
	return nil
}

// PeekBody reads the request body and puts it back, so that a handler can
// look at it before another decodes it.
func PeekBody(c echo.Context) ([]byte, error) {
	req := c.Request()
	if req.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, BodyReadError(err)
	}
	req.Body = io.NopCloser(bytes.NewReader(data))
	return data, nil
}

// BodyReadError is the API error for a failed read of a request body.
func BodyReadError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return NewError(http.StatusRequestEntityTooLarge, "body_too_large", "request body is larger than the limit (limits.body_bytes in dawn.yaml)")
	case errors.Is(err, ErrBodyTimeout):
		return NewError(http.StatusRequestTimeout, "body_timeout", err.Error())
	}
	return BadBody("cannot read request body: " + err.Error())
}

// CheckThreadID bounds client-chosen thread ids: 1 to 128 letters,
// digits, '-', '_' and '.', and not "." or "..", which every URL
// normalizer (fetch, the LangGraph SDK, curl) drops from a path, so that
// no client could name the thread again.
func CheckThreadID(id string) error {
	if len(id) == 0 || len(id) > 128 {
		return NewError(http.StatusBadRequest, "invalid_thread_id", "thread id must be 1 to 128 characters")
	}
	if id == "." || id == ".." {
		return NewError(http.StatusBadRequest, "invalid_thread_id", "thread id "+strconv.Quote(id)+" is a path segment URLs drop, so the thread could not be named again: choose an id with a letter or digit")
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return NewError(http.StatusBadRequest, "invalid_thread_id", "thread id "+strconv.Quote(id)+" may hold only letters, digits, '-', '_' and '.'")
		}
	}
	return nil
}

// LastEventID reads the Last-Event-ID header, or else the after query
// parameter: 0 when neither is set, and a 400 naming the one that is not
// a whole number from 0 up; an id past MaxEventID is MaxEventID.
func LastEventID(c echo.Context) (int64, error) {
	name, v := "Last-Event-ID header", c.Request().Header.Get("Last-Event-ID")
	if v == "" {
		name, v = "after parameter", c.QueryParam("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, NewError(http.StatusBadRequest, "invalid_last_event_id", "the "+name+" "+strconv.Quote(v)+" is not an event id: send the id: of the last event received, a whole number (0 replays from the start)")
	}
	// No run has an event past MaxEventID: a larger id has seen them
	// all, and the id of an event made after it (a cut-off run's done)
	// must not wrap around.
	return min(n, MaxEventID), nil
}

// MaxEventID is the largest event id LastEventID gives: 2^53-1, the
// largest whole number a JavaScript client holds exactly.
const MaxEventID = 1<<53 - 1

// MustJSON marshals v, which cannot fail to marshal.
func MustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
