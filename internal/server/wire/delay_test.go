package wire_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/server/wire"
)

func TestNotBefore(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		secs float64
		want time.Time
		says string // "" when the delay is fine, else a part of the message
	}{
		{0, time.Time{}, ""},
		{1.5, now.Add(1500 * time.Millisecond), ""},
		{wire.MaxAfterSeconds, now.Add(wire.MaxAfterSeconds * time.Second), ""},
		{-1, time.Time{}, "0 or more"},
		{wire.MaxAfterSeconds + 1, time.Time{}, "at most 31536000"},
		{1e10, time.Time{}, "at most 31536000"},
		{1e300, time.Time{}, "at most 31536000"},
	} {
		got, err := wire.NotBefore(tc.secs, now)
		var we *wire.Error
		switch {
		case tc.says == "" && (err != nil || !got.Equal(tc.want)):
			t.Errorf("NotBefore(%g) = %v, %v; want %v", tc.secs, got, err, tc.want)
		case tc.says != "" && (!errors.As(err, &we) || we.Status != http.StatusBadRequest || !strings.Contains(we.Msg, "after_seconds must be "+tc.says)):
			t.Errorf("NotBefore(%g) = %v, %v; want a 400 saying %q", tc.secs, got, err, tc.says)
		}
	}
}
