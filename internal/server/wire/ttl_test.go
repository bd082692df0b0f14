package wire_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/server/wire"
)

// TestThreadTTL: a thread's ttl is LangGraph's {ttl, strategy} in
// minutes, or a bare number of minutes; anything else is a 400 that names
// ttl and says what to write.
func TestThreadTTL(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want time.Duration
		bad  string // in the error's message; "" when accepted
	}{
		{``, 0, ""},
		{`null`, 0, ""},
		{`{"ttl": 60, "strategy": "delete"}`, time.Hour, ""},
		{`{"ttl": 1.5}`, 90 * time.Second, ""},
		{`0.02`, 1200 * time.Millisecond, ""},
		{`{"ttl": 60, "strategy": "keep_latest"}`, 0, `"keep_latest" is not built`},
		{`{"ttl": 60, "strategy": "archive"}`, 0, `ttl.strategy "archive"`},
		{`{"strategy": "delete"}`, 0, "ttl.ttl is missing"},
		{`{"ttl": 0}`, 0, "above 0"},
		{`{"ttl": -5}`, 0, "above 0"},
		{`-1`, 0, "above 0"},
		{`1e300`, 0, "at most"},
		{`{"ttl": "60"}`, 0, "ttl:"},
		{`"60"`, 0, "ttl must be an object or a number"},
		{`[60]`, 0, "ttl must be an object or a number"},
		{`1e-30`, 0, "too short"},
	} {
		got, err := wire.ThreadTTL(json.RawMessage(tt.raw))
		if tt.bad == "" {
			if err != nil || got != tt.want {
				t.Errorf("%s: %v, %v; want %v", tt.raw, got, err, tt.want)
			}
			continue
		}
		var e *wire.Error
		if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(e.Msg, tt.bad) ||
			!strings.Contains(e.Msg, "ttl") || !strings.Contains(e.Msg, `"delete"`) {
			t.Errorf("%s: %v, %v; want a 400 naming ttl, containing %q and saying what to write", tt.raw, got, err, tt.bad)
		}
	}
}
