package yamldoc

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestSplitFrontMatter(t *testing.T) {
	tests := []struct {
		name, in          string
		front, body       string
		hasFront, unclose bool
	}{
		{"no front matter", "Hello\n---\n", "", "Hello\n---\n", false, false},
		{"front matter", "---\nmodel: x\n---\nBody\n", "model: x\n", "Body\n", true, false},
		{"empty block", "---\n---\nBody", "", "Body", true, false},
		{"fences with trailing blanks", "--- \nk: v\n---\t\nBody", "k: v\n", "Body", true, false},
		{"closing fence at end of file", "---\nk: v\n---", "k: v\n", "", true, false},
		{"indented fence is not a fence", "---\nk: v\n ---\n", "", "", false, true},
		{"unclosed", "---\nk: v\n", "", "", false, true},
		{"only a fence", "---", "", "", false, true},
		{"empty file", "", "", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front, body, err := SplitFrontMatter([]byte(tt.in))
			if tt.unclose {
				if !errors.Is(err, ErrUnclosed) {
					t.Fatalf("err = %v, want ErrUnclosed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (front != nil) != tt.hasFront || string(front) != tt.front || string(body) != tt.body {
				t.Errorf("front %q (nil %v), body %q; want %q (present %v), %q", front, front == nil, body, tt.front, tt.hasFront, tt.body)
			}
		})
	}
}

func TestMapping(t *testing.T) {
	tests := []struct {
		name, in string
		keys     []string
		wantErr  string
	}{
		{"empty", "", nil, ""},
		{"null", "~\n", nil, ""},
		{"comments only", "# nothing\n", nil, ""},
		{"keys in order", "b: 1\na: [x]\nc:\n  d: 2\n", []string{"b", "a", "c"}, ""},
		{"alias resolved", "base: &b {x: 1}\nuse: *b\n", []string{"base", "use"}, ""},
		{"not a mapping", "\n- a\n", nil, "line 2: expected a mapping of keys"},
		{"scalar", "hello\n", nil, "line 1: expected a mapping of keys"},
		{"not YAML", "a: [\n", nil, "yaml: line 1: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := Mapping([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k, v := range Pairs(root) {
				keys = append(keys, k.Value)
				if v == nil || v.Kind == 0 {
					t.Errorf("key %s has no value", k.Value)
				}
			}
			if strings.Join(keys, ",") != strings.Join(tt.keys, ",") {
				t.Errorf("keys = %v, want %v", keys, tt.keys)
			}
		})
	}
	root, _ := Mapping([]byte("base: &b {x: 1}\nuse: *b\n"))
	for k, v := range Pairs(root) {
		if k.Value == "use" && (v.Kind != root.Content[1].Kind || len(v.Content) != 2) {
			t.Errorf("alias not resolved: %+v", v)
		}
	}
}

func TestSyntaxErrorLine(t *testing.T) {
	_, err := Mapping([]byte("a: 1\nb: [\n"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("err = %#v, want a *SyntaxError on line 2", err)
	}
}

func FuzzSplitFrontMatter(f *testing.F) {
	f.Add([]byte("---\nmodel: x\n---\nBody\n"))
	f.Add([]byte("---\n"))
	f.Add([]byte("no front matter"))
	f.Fuzz(func(t *testing.T, data []byte) {
		front, body, err := SplitFrontMatter(data)
		if err != nil {
			return
		}
		if front == nil {
			if string(body) != string(data) {
				t.Fatalf("no front matter, but body %q is not the input %q", body, data)
			}
			return
		}
		if len(front)+len(body) > len(data) || !strings.HasSuffix(string(data), string(body)) {
			t.Fatalf("front %q and body %q are not parts of %q", front, body, data)
		}
	})
}

func FuzzMapping(f *testing.F) {
	f.Add([]byte("a: 1\nb: [x, y]\n"))
	f.Add([]byte("&a [*a]"))
	f.Add([]byte("a: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := Mapping(data)
		if err != nil {
			return
		}
		for k, v := range Pairs(root) {
			if k == nil || v == nil {
				t.Fatal("Pairs yielded a nil node")
			}
		}
	})
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
		ok   bool
	}{
		{"3", 3, true},
		{"-2", -2, true},
		{"0x10", 16, true},
		{"1.5", 0, false},
		{"1e3", 0, false},
		{"x", 0, false},
		{"~", 0, false},
		{"[1]", 0, false},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("v: "+tc.src), &doc); err != nil {
			t.Fatal(err)
		}
		got, ok := Int(doc.Content[0].Content[1])
		if got != tc.want || ok != tc.ok {
			t.Errorf("Int(%s) = %d, %v; want %d, %v", tc.src, got, ok, tc.want, tc.ok)
		}
	}
}
