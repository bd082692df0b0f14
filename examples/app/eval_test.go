package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/cli"
	"github.com/dawn-go/dawn/internal/docstext"
	"github.com/dawn-go/dawn/internal/eval"
	"github.com/dawn-go/dawn/internal/models"
)

// TestEvalCommand: `dawn eval` on this app with the offline model (and
// the app's tools and verifiers, as dawn.Main passes them) passes every
// shipped case and writes JUnit XML a CI system reads.
func TestEvalCommand(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := cli.Run([]string{"eval", "--app", ".", "--repeat", "2", "--out", out}, cli.Config{
		Tools: dawn.Tools(options()...), ToolsKnown: true, Markers: dawn.Capabilities(options()...),
		Stdout: &stdout, Stderr: &stderr, Env: func(string) string { return "" },
	})
	if code != 0 {
		t.Fatalf("dawn eval exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, c := range []string{"works through the plan (/support/[tenant])", "continues a thread (/support/[tenant])", "delegates to the researcher (/research)", "ships with a checked plan (/release)"} {
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
	if err := xml.Unmarshal(data, &junit); err != nil || junit.Tests != 8 || junit.Failures != 0 {
		t.Errorf("junit.xml: %d tests, %d failures, %v; want 8 and 0", junit.Tests, junit.Failures, err)
	}
}

// TestEvals runs the same cases in go test, each a subtest, on the
// offline model.
func TestEvals(t *testing.T) {
	t.Setenv("DAWN_MODEL", "")
	dawntest.Eval(t, ".", nil, dawntest.Options{Tools: dawn.Tools(options()...), Markers: dawn.Capabilities(options()...)})
}

// evalCaseMarker, on the line before a yaml block of the docs, says the
// block is an eval case file of the route after the colon.
const evalCaseMarker = "eval case:"

// isEvalCase reports whether b is an eval case file of the docs.
func isEvalCase(b docstext.Block) bool { return strings.HasPrefix(b.Marker, evalCaseMarker) }

// TestDocsEvalExamples runs every eval case file of the docs (a yaml block
// marked <!-- eval case: ROUTE -->) against this app on the offline model:
// each case must parse and pass.
func TestDocsEvalExamples(t *testing.T) {
	blocks, err := docstext.Blocks("../..")
	if err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, ".", models.NewOffline(), apptest.Options{Tools: dawn.Tools(options()...), Markers: dawn.Capabilities(options()...)})
	checked := 0
	for _, b := range blocks {
		if !isEvalCase(b) {
			continue
		}
		checked++
		route := strings.TrimSpace(strings.TrimPrefix(b.Marker, evalCaseMarker))
		cases, err := eval.Parse(fmt.Sprintf("%s:%d", b.File, b.Line), route, []byte(b.Text))
		if err != nil {
			t.Errorf("%s:%d: this eval case example does not parse: %v", b.File, b.Line, err)
			continue
		}
		report := eval.Run(context.Background(), h.Runs, cases, eval.Options{Concurrency: 2})
		for _, line := range report.Below(1) {
			t.Errorf("%s:%d: this eval case example does not pass: %s", b.File, b.Line, line)
		}
	}
	if checked == 0 {
		t.Fatal("the docs have no eval case example; the parser is broken")
	}
}
