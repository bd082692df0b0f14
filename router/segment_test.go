package router

import (
	"strings"
	"testing"
)

func TestParseSegment(t *testing.T) {
	tests := []struct {
		name    string
		want    Segment
		group   bool
		wantErr string // substring; "" means no error
	}{
		{name: "support", want: Segment{Static, "support"}},
		{name: "blog-posts.v2", want: Segment{Static, "blog-posts.v2"}},
		{name: "[tenant]", want: Segment{Dynamic, "tenant"}},
		{name: "[_id9]", want: Segment{Dynamic, "_id9"}},
		{name: "[...slug]", want: Segment{CatchAll, "slug"}},
		{name: "[[...slug]]", want: Segment{OptionalCatchAll, "slug"}},
		{name: "(marketing)", group: true},
		{name: "", wantErr: "empty"},
		{name: "[", wantErr: `does not end with "]"`},
		{name: "]x", wantErr: "may not contain [ ] ( or )"},
		{name: "a[b]", wantErr: "may not contain [ ] ( or )"},
		{name: "a(b)", wantErr: "may not contain [ ] ( or )"},
		{name: "[...]", wantErr: "no name"},
		{name: "[]", wantErr: "no name"},
		{name: "[[...]]", wantErr: "no name"},
		{name: "[a-b c]", wantErr: `param name "a-b c"`},
		{name: "[1st]", wantErr: `param name "1st"`},
		{name: "[[x]]", wantErr: "only for optional catch-alls: write [[...x]]"},
		{name: "[...x", wantErr: `does not end with "]"`},
		{name: "[[...x]", wantErr: `does not end with "]]"`},
		{name: "[....x]", wantErr: `param name ".x"`},
		{name: "(", wantErr: `must end with ")"`},
		{name: "()", wantErr: "no name"},
		{name: "(a[b])", wantErr: "group name"},
		{name: "a#b", wantErr: `"#"`},
		{name: `a\b`, wantErr: `"\"`},
		{name: "..", wantErr: "not folder names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seg, group, err := ParseSegment(tt.name)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseSegment(%q) = %+v, %v, want an error", tt.name, seg, group)
				}
				for _, want := range []string{tt.wantErr, "accepted forms", "[[...param]]", "(group)"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSegment(%q) error = %v", tt.name, err)
			}
			if seg != tt.want || group != tt.group {
				t.Errorf("ParseSegment(%q) = %+v, %v; want %+v, %v", tt.name, seg, group, tt.want, tt.group)
			}
			if !group && seg.String() != tt.name {
				t.Errorf("String() = %q, want %q", seg.String(), tt.name)
			}
		})
	}
}
