package todo

import "testing"

func TestStatus(t *testing.T) {
	tests := []struct {
		s                      Status
		valid, owned, terminal bool
	}{
		{Pending, true, true, false},
		{InProgress, true, true, false},
		{Completed, true, true, true},
		{Failed, false, true, true},
		{Skipped, false, true, true},
		{"done", false, false, false},
		{"", false, false, false},
	}
	for _, tt := range tests {
		if got := tt.s.Valid(); got != tt.valid {
			t.Errorf("%q.Valid() = %v", tt.s, got)
		}
		if got := tt.s.ValidOwned(); got != tt.owned {
			t.Errorf("%q.ValidOwned() = %v", tt.s, got)
		}
		if got := tt.s.Terminal(); got != tt.terminal {
			t.Errorf("%q.Terminal() = %v", tt.s, got)
		}
	}
}
