package tokens

import "testing"

// TestCountOffline: counts come from the embedded tables (the test runs
// with no network in CI) and match o200k_base's known encodings.
func TestCountOffline(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Help me with my account", 5},
	} {
		if got := Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}
