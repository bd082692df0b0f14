package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestMain gives the package one folder for the programs its tests build,
// so each program is linked once per test binary, not once per test, and
// removes it at the end.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dawn-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	return m.Run()
}

var (
	// binDir holds the programs built by built.
	binDir string
	// builds remembers each package's build, its binary or its error.
	builds sync.Map // package path → *build
)

// build is one package's binary, built at most once per test binary.
type build struct {
	once sync.Once
	bin  string
	err  error
}

// built builds the package pkg of this module (a slash path from the
// module root, such as "cmd/dawn") the first time a test asks for it and
// returns the same binary after that. Tests only run it: none may change
// or delete it.
func built(t *testing.T, pkg string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &build{})
	b := v.(*build)
	b.once.Do(func() {
		name := strings.ReplaceAll(strings.Trim(pkg, "/"), "/", "_")
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		b.bin = filepath.Join(binDir, name)
		cmd := exec.Command("go", "build", "-o", b.bin, "./"+pkg)
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build ./%s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}
