package cli

import (
	"bytes"
	"testing"
	"time"
)

// TestSlowNotice: the "can take a minute or two" note is written only when
// the work outlasts the delay, never after stop returns.
func TestSlowNotice(t *testing.T) {
	var fast bytes.Buffer
	stop := slowNotice(&fast, 50*time.Millisecond, "slow\n")
	stop()
	time.Sleep(100 * time.Millisecond)
	if fast.Len() != 0 {
		t.Errorf("a quick build was told it is slow: %q", fast.String())
	}
	var slow bytes.Buffer
	stop = slowNotice(&slow, 10*time.Millisecond, "slow\n")
	time.Sleep(60 * time.Millisecond)
	stop()
	if slow.String() != "slow\n" {
		t.Errorf("a slow build's note = %q, want it once", slow.String())
	}
}
