package inspector

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestInitIsCheap: importing the inspector costs a command that never
// serves it (dawn routes, dawn check) nothing. The test binary runs again
// with GODEBUG=inittrace=1 and no tests, and the package's init must
// allocate next to nothing; gzipping the assets there allocated 2.5 MB.
func TestInitIsCheap(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := regexp.MustCompile(`init github\.com/dawn-go/dawn/inspector @[^,]+, [^,]+, (\d+) bytes`).FindSubmatch(out)
	if m == nil {
		return // no init work at all: the trace has no line for the package
	}
	if n, _ := strconv.Atoi(string(m[1])); n > 64<<10 {
		t.Errorf("the inspector's init allocates %d bytes; load its assets on first use", n)
	}
}
