package cli

import (
	"strings"
	"testing"
)

// TestStartBadLease: a DAWN_STORE_LEASE that is not a duration, or too short
// to survive a pause of the process, stops dawn start with an error naming
// the variable, before it serves anything.
func TestStartBadLease(t *testing.T) {
	dir := writeRunApp(t)
	for _, v := range []string{"soon", "10ms", "-5s"} {
		code, _, stderr := runCLI(t, map[string]string{"DAWN_STORE_LEASE": v}, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
		if code == ExitOK || !strings.Contains(stderr, `DAWN_STORE_LEASE="`+v+`"`) || !strings.Contains(stderr, "at least 1s") {
			t.Errorf("DAWN_STORE_LEASE=%s: exit %d, stderr:\n%s\nwant a failure naming the variable and the minimum", v, code, stderr)
		}
	}
}
