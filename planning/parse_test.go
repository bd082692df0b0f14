package planning

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Todo
	}{
		{"empty file", "", []Todo{}},
		{"no task items", "# Plan\n\nSome prose.\n\n- plain item\n1. numbered\n", []Todo{}},
		{
			"document order",
			"- [ ] Understand the customer request\n- [ ] Check account context\n- [x] Decide whether to answer or escalate\n- [ ] Write the final response\n",
			[]Todo{
				{"Understand the customer request", Pending, ""},
				{"Check account context", Pending, ""},
				{"Decide whether to answer or escalate", Completed, ""},
				{"Write the final response", Pending, ""},
			},
		},
		{"lower x completed", "- [x] done\n", []Todo{{"done", Completed, ""}}},
		{"upper X completed", "- [X] done\n", []Todo{{"done", Completed, ""}}},
		{"space pending", "- [ ] todo\n", []Todo{{"todo", Pending, ""}}},
		{"trimmed", "-   [ ]    spaced out   \t\n", []Todo{{"spaced out", Pending, ""}}},
		{"empty items skipped", "- [ ]\n- [x]   \n- [ ] kept\n", []Todo{{"kept", Pending, ""}}},
		{
			"nested flattened parent first",
			"- [ ] parent\n  - [x] child one\n  - [ ] child two\n    - [ ] grandchild\n- [ ] sibling\n",
			[]Todo{
				{"parent", Pending, ""},
				{"child one", Completed, ""},
				{"child two", Pending, ""},
				{"grandchild", Pending, ""},
				{"sibling", Pending, ""},
			},
		},
		{
			"non-task parent with task children",
			"- Phase one\n  - [ ] first\n  - plain\n- [ ] second\n",
			[]Todo{{"first", Pending, ""}, {"second", Pending, ""}},
		},
		{"other list markers", "* [ ] star\n+ [x] plus\n1. [ ] numbered\n", []Todo{{"star", Pending, ""}, {"plus", Completed, ""}, {"numbered", Pending, ""}}},
		{"inline markup kept as written", "- [ ] Check **account** context and `id`\n", []Todo{{"Check **account** context and `id`", Pending, ""}}},
		{"link kept as written", "- [ ] Read [the docs](https://example.com)\n", []Todo{{"Read [the docs](https://example.com)", Pending, ""}}},
		{"lazy continuation joined", "- [ ] first line\n  second line\n", []Todo{{"first line second line", Pending, ""}}},
		{"loose list", "- [ ] one\n\n- [x] two\n", []Todo{{"one", Pending, ""}, {"two", Completed, ""}}},
		{
			"item's later paragraphs ignored",
			"- [ ] title\n\n  more detail\n",
			[]Todo{{"title", Pending, ""}},
		},
		{"fenced code ignored", "```\n- [ ] not a task\n```\n- [ ] real\n", []Todo{{"real", Pending, ""}}},
		{"indented code ignored", "Text\n\n    - [ ] not a task\n\n- [ ] real\n", []Todo{{"real", Pending, ""}}},
		{"checkbox mid-line ignored", "- do [ ] this\n", []Todo{}},
		{"paragraph checkbox ignored", "[ ] not in a list\n", []Todo{}},
		{"in blockquote", "> - [ ] quoted\n", []Todo{{"quoted", Pending, ""}}},
		{"BOM", "\xef\xbb\xbf- [ ] first\n- [x] second\n", []Todo{{"first", Pending, ""}, {"second", Completed, ""}}},
		{"CRLF", "- [ ] first\r\n- [x] second\r\n  - [ ] child\r\n", []Todo{{"first", Pending, ""}, {"second", Completed, ""}, {"child", Pending, ""}}},
		{"lone CR", "- [ ] first\r- [ ] second\r", []Todo{{"first", Pending, ""}, {"second", Pending, ""}}},
		{"headings and prose around", "# Support plan\n\nSteps:\n\n- [ ] a\n\nNotes here.\n\n## Later\n\n- [X] b\n", []Todo{{"a", Pending, ""}, {"b", Completed, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse([]byte(tt.src))
			if got == nil {
				t.Fatal("Parse returned nil, want a non-nil list")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q)\n got %q\nwant %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestParseNilInput(t *testing.T) {
	if got := Parse(nil); got == nil || len(got) != 0 {
		t.Errorf("Parse(nil) = %#v, want an empty non-nil list", got)
	}
}

func TestParseDoesNotModifyInput(t *testing.T) {
	src := []byte("\xef\xbb\xbf- [ ] a\r\n- [x] b\r\n")
	orig := string(src)
	Parse(src)
	if string(src) != orig {
		t.Errorf("Parse changed its input: %q", src)
	}
}

func TestLoadSeed(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("- [ ] a step of the plan\n", MaxSeedBytes/24+10)
	exact := "- [ ] last\n"
	exact = strings.Repeat(" ", MaxSeedBytes-len(exact)) + "\n" + exact
	exact = exact[1:]

	tests := []struct {
		name        string
		content     string
		want        []Todo
		wantWarning []string
	}{
		{"empty", "", []Todo{}, nil},
		{"seed", "- [ ] one\n- [x] two\n", []Todo{{"one", Pending, ""}, {"two", Completed, ""}}, nil},
		{"exactly the limit", exact, []Todo{{"last", Pending, ""}}, nil},
		{"over the limit", big, []Todo{}, []string{"too-big.md", "65536 byte", "plan starts empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := strings.ReplaceAll(tt.name, " ", "-") + ".md"
			if tt.wantWarning != nil {
				name = "too-big.md"
			}
			path := writeFile(t, dir, name, tt.content)
			got, warning, err := LoadSeed(path)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("todos = %#v, want %#v", got, tt.want)
			}
			checkSeedWarning(t, warning, path, tt.wantWarning)
			after, _ := os.ReadFile(path)
			if string(after) != tt.content {
				t.Error("LoadSeed changed the file")
			}
		})
	}
}

// checkSeedWarning checks LoadSeed's warning about the file at path: none
// when want is nil, else one naming the file and every part of want.
func checkSeedWarning(t *testing.T, warning, path string, want []string) {
	t.Helper()
	if want == nil {
		if warning != "" {
			t.Errorf("unexpected warning %q", warning)
		}
		return
	}
	for _, part := range want {
		if !strings.Contains(warning, part) {
			t.Errorf("warning %q does not mention %q", warning, part)
		}
	}
	if !strings.Contains(warning, path) {
		t.Errorf("warning %q does not name the file %s", warning, path)
	}
}

func TestLoadSeedSizeInWarning(t *testing.T) {
	path := filepath.Join(t.TempDir(), MarkerFile)
	if err := os.WriteFile(path, make([]byte, MaxSeedBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, warning, err := LoadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warning, "65537 bytes") {
		t.Errorf("warning %q does not give the file size", warning)
	}
}

func TestLoadSeedMissing(t *testing.T) {
	_, _, err := LoadSeed(filepath.Join(t.TempDir(), MarkerFile))
	if err == nil {
		t.Fatal("want an error for a missing file")
	}
}
