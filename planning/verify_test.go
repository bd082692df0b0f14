package planning

import (
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/harness"
)

// TestVerifyLines: a nested "- verify:" bullet under a task item of a
// harness-owned plan.md is that item's (or postcondition's) verifier; it is
// not an item, Dawn's Parse ignores it, and other nested bullets are not
// verifiers.
func TestVerifyLines(t *testing.T) {
	src := "---\nenforce: true\n---\n" +
		"- [ ] Write the notes\n  - verify: test -s notes.md\n  - verify: second is ignored\n" +
		"- [ ] Plain\n  - a note, not a verifier\n" +
		"- [ ] Parent\n  - [ ] Child\n    - verify: tool lookupOrder {\"id\":\"1\"}\n" +
		"\n## Done when\n- [ ] Green\n  - verify: buildGreen\n"
	f, err := ParseFile("plan.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, td := range f.Seed {
		items = append(items, td.Content)
	}
	if want := []string{"Write the notes", "Plain", "Parent", "Child"}; !slices.Equal(items, want) {
		t.Fatalf("items %q, want %q", items, want)
	}
	if want := []string{"test -s notes.md", "", "", `tool lookupOrder {"id":"1"}`}; !slices.Equal(f.Verify, want) {
		t.Fatalf("verifiers %q, want %q", f.Verify, want)
	}
	if !slices.Equal(f.Settings.PostVerify, []string{"buildGreen"}) {
		t.Fatalf("postcondition verifiers %q", f.Settings.PostVerify)
	}
	if got := Parse([]byte(src[strings.Index(src, "- [ ]"):])); len(got) != 5 { // Dawn's parse: four items and the postcondition
		t.Fatalf("Dawn's Parse gave %d items: %+v", len(got), got)
	}
}

// TestParseCheck reads each kind of verifier line.
func TestParseCheck(t *testing.T) {
	named := func(n string) bool { return n == "notesWritten" }
	cases := []struct {
		line, kind, name, command, args, err string
	}{
		{"notesWritten", harness.CheckVerifier, "notesWritten", "", "", ""},
		{"notes", harness.CheckCommand, "", "notes", "", ""},
		{"go test ./...", harness.CheckCommand, "", "go test ./...", "", ""},
		{"tool lookupOrder", harness.CheckTool, "lookupOrder", "", "{}", ""},
		{`tool lookupOrder {"id": "42"}`, harness.CheckTool, "lookupOrder", "", `{"id": "42"}`, ""},
		{"tool lookupOrder [1]", "", "", "", "", "must be one JSON object"},
		{"tool lookupOrder {id}", "", "", "", "", "must be one JSON object"},
		{"  ", "", "", "", "", "needs a command"},
	}
	for _, c := range cases {
		got, err := harness.ParseCheck(c.line, named)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil || got.Kind != c.kind || got.Name != c.name || got.Command != c.command || string(got.Args) != c.args {
			t.Errorf("%q = %+v, %v", c.line, got, err)
		}
	}
}

func FuzzParseCheck(f *testing.F) {
	for _, s := range []string{"notesWritten", "tool x {}", "tool x {\"a\":1}", "go test ./...", "tool", "tool  "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, err := harness.ParseCheck(line, func(n string) bool { return n == "notesWritten" })
		if err != nil {
			return
		}
		switch c.Kind {
		case harness.CheckTool:
			if c.Args == nil || c.Command != "" {
				t.Fatalf("%q: tool check %+v", line, c)
			}
		case harness.CheckCommand:
			if strings.TrimSpace(c.Command) == "" {
				t.Fatalf("%q: empty command", line)
			}
		case harness.CheckVerifier:
			if c.Name != "notesWritten" {
				t.Fatalf("%q: verifier %q", line, c.Name)
			}
		default:
			t.Fatalf("%q: kind %q", line, c.Kind)
		}
	})
}
