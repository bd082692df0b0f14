package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/cli"
)

// TestEvalCommand: `dawn eval` on this app with the offline model passes
// every shipped case and writes JUnit XML a CI system reads.
func TestEvalCommand(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := cli.Run([]string{"eval", "--app", ".", "--repeat", "2", "--out", out}, cli.Config{
		Tools: dawn.Tools(options()...), ToolsKnown: true,
		Stdout: &stdout, Stderr: &stderr, Env: func(string) string { return "" },
	})
	if code != 0 {
		t.Fatalf("dawn eval exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, c := range []string{"works through the plan (/support/[tenant])", "continues a thread (/support/[tenant])", "delegates to the researcher (/research)"} {
		if !strings.Contains(stdout.String(), c) {
			t.Errorf("the table lacks the case %s:\n%s", c, stdout.String())
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(data, &junit); err != nil || junit.Tests != 6 || junit.Failures != 0 {
		t.Errorf("junit.xml: %d tests, %d failures, %v; want 6 and 0", junit.Tests, junit.Failures, err)
	}
}

// TestEvals runs the same cases in go test, each a subtest, on the
// offline model.
func TestEvals(t *testing.T) {
	t.Setenv("DAWN_MODEL", "")
	dawntest.Eval(t, ".", nil, dawntest.Options{Tools: dawn.Tools(options()...)})
}
