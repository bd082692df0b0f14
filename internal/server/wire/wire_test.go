package wire_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/labstack/echo/v4"
)

func TestCheckThreadID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want string // "" when the id is fine, else a part of the message
	}{
		{"t-1", ""},
		{"a.b..c", ""},
		{strings.Repeat("x", 128), ""},
		{"", "1 to 128"},
		{strings.Repeat("x", 129), "1 to 128"},
		{".", "path segment"},
		{"..", "path segment"},
		{"a/b", `"a/b" may hold only`},
		{"caf\u00e9", "may hold only"},
	} {
		err := wire.CheckThreadID(tc.id)
		var we *wire.Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckThreadID(%q) = %v, want nil", tc.id, err)
		case tc.want != "" && (!errors.As(err, &we) || we.Status != http.StatusBadRequest || we.Kind != "invalid_thread_id" || !strings.Contains(we.Msg, tc.want)):
			t.Errorf("CheckThreadID(%q) = %v, want 400 invalid_thread_id saying %q", tc.id, err, tc.want)
		}
	}
}

func TestLastEventID(t *testing.T) {
	for _, tc := range []struct {
		header, query string
		want          int64
		bad           string // a part of the 400's message
	}{
		{"", "", 0, ""},
		{"7", "", 7, ""},
		{"", "3", 3, ""},
		{"5", "9", 5, ""}, // the header wins
		{"-1", "", 0, "Last-Event-ID header"},
		{"", "x", 0, "after parameter"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/?after="+tc.query, nil)
		if tc.query == "" {
			req = httptest.NewRequest(http.MethodGet, "/", nil)
		}
		if tc.header != "" {
			req.Header.Set("Last-Event-ID", tc.header)
		}
		got, err := wire.LastEventID(echo.New().NewContext(req, httptest.NewRecorder()))
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("header %q, after %q: %v, want a 400 naming the %s", tc.header, tc.query, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("header %q, after %q: %d, %v; want %d", tc.header, tc.query, got, err, tc.want)
		}
	}
}

// TestShapeErrors: a wire's shape applies to the requests under its
// middleware only; others get Dawn's body as it is.
func TestShapeErrors(t *testing.T) {
	var body wire.ErrorBody
	body.Error.Kind, body.Error.Message = "invalid_body", "bad"
	type shaped struct {
		wire.ErrorBody
		Extra string
	}
	shape := wire.ShapeErrors(func(b wire.ErrorBody) any { return shaped{b, b.Error.Message} })
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder())
	if got, ok := wire.Shaped(c, body).(wire.ErrorBody); !ok || got != body {
		t.Fatalf("unshaped request: %#v, want Dawn's body", got)
	}
	_ = shape(func(c echo.Context) error { return nil })(c)
	if got, ok := wire.Shaped(c, body).(shaped); !ok || got.Extra != "bad" {
		t.Fatalf("shaped request: %#v, want the wire's shape", wire.Shaped(c, body))
	}
}
