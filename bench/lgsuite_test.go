package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/markers"
)

func TestParseSuiteCountsPerDescribeBlock(t *testing.T) {
	report := `{"testResults":[{"assertionResults":[
	 {"ancestorTitles":["assistants"],"title":"create","status":"passed"},
	 {"ancestorTitles":["assistants","schemas"],"title":"zod","status":"failed","failureMessages":["AssertionError: expected 1 to be 2\n    at x"]},
	 {"ancestorTitles":[],"title":"custom routes","status":"failed","failureMessages":["Error: 404 Not Found"]},
	 {"ancestorTitles":["command update state"],"title":"list-based updates","status":"skipped"}]}]}`
	rows, err := parseSuite([]byte(report))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Block != "assistants" || rows[0].Passed != 1 || rows[0].Failed != 1 || rows[1].Block != "(top level)" || rows[2].Skipped != 1 {
		t.Fatalf("rows = %+v", rows)
	}
	var out bytes.Buffer
	writeSuite(&out, rows, false)
	for _, want := range []string{"| assistants | 2 | 1 | 1 | 0 |", "| **all** | 4 | 1 | 2 | 1 |", "- assistants › schemas › zod: AssertionError: expected 1 to be 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFindSuiteTestsNamesWhatItNeeds(t *testing.T) {
	dir := t.TempDir()
	if _, err := findSuiteTests(dir); err == nil || !strings.Contains(err.Error(), "libs/langgraph-api/tests/api.test.mts") {
		t.Fatalf("err = %v", err)
	}
	tests := filepath.Join(dir, "libs", "langgraph-api", "tests")
	if err := os.MkdirAll(tests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tests, "api.test.mts"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := findSuiteTests(dir); err != nil || got != tests {
		t.Fatalf("got %q, %v", got, err)
	}
}

// The suite's app is loaded by the stock binary; it must stay a valid app.
func TestSuiteAppLoads(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(lgsuiteFiles, "lgsuite", dir); err != nil {
		t.Fatal(err)
	}
	a, err := app.Load(context.Background(), filepath.Join(dir, "app"), app.Options{Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	if a.Routes["/agent"] == nil || len(a.Routes) < 10 {
		t.Fatalf("routes = %v", len(a.Routes))
	}
}
