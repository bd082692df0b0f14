package router

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func FuzzParseSegment(f *testing.F) {
	for _, s := range []string{"support", "[tenant]", "[...slug]", "[[...slug]]", "(group)", "[", "]x", "[...]", "[[x]]", "[a-b c]", "()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		seg, group, err := ParseSegment(name)
		if err != nil {
			if !strings.Contains(err.Error(), "accepted forms") {
				t.Errorf("error %q does not list the accepted forms", err)
			}
			return
		}
		if group {
			if seg != (Segment{}) {
				t.Errorf("group %q returned segment %+v", name, seg)
			}
			return
		}
		if seg.String() != name {
			t.Errorf("ParseSegment(%q).String() = %q", name, seg.String())
		}
		if seg.Kind != Static && !isParamName(seg.Value) {
			t.Errorf("ParseSegment(%q) accepted param name %q", name, seg.Value)
		}
	})
}

func FuzzMatch(f *testing.F) {
	f.Add("/support/[tenant]", "/support/acme#agent")
	f.Add("/docs/[...slug]", "/docs/a/b/c/")
	f.Add("/files/[[...path]]", "/files")
	f.Add("/a/[x]/b", "a/../b")
	f.Add("/", "//")
	f.Add("/s/[tenant]", "/s/..%2fetc")
	f.Add("/s/[tenant]", "/s/a%20b%23c")
	f.Add("/s/[...rest]", "/s/a/%2e%2e/b")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		r, err := routeFromID(pattern)
		if err != nil {
			return
		}
		routes := []*Route{r}
		if pattern != "/" {
			root, _ := routeFromID("/")
			routes = append(routes, root)
		}
		tree := newTree("", routes)
		got, params, err := tree.Match(path)
		if err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalidPath) {
				t.Fatalf("Match(%q) error %v is neither ErrNotFound nor ErrInvalidPath", path, err)
			}
			return
		}
		if got == nil || params == nil {
			t.Fatalf("Match(%q) = %v, %v with no error", path, got, params)
		}
		if len(params) == 0 {
			return
		}
		// A concrete match's params are values Path accepts (no "..", "/" in
		// a one-part param, control characters or over-long values), and
		// the path Path builds from them matches again to the same params.
		built, err := got.Path(params)
		if err != nil {
			t.Fatalf("Match(%q) params %q do not build a path: %v", path, params, err)
		}
		again, params2, err := tree.Match(built)
		if err != nil || again != got || !reflect.DeepEqual(params2, params) {
			t.Fatalf("Match(%q) params %q build %q, which matches %v %q, %v", path, params, built, again, params2, err)
		}
	})
}

func FuzzParseAgent(f *testing.F) {
	f.Add([]byte("---\nmodel: m\ntools: [a]\nmax_turns: 3\n---\nHi\n"))
	f.Add([]byte("\uFEFF---\r\ndescription: d\r\n---\r\nHi\r\n"))
	f.Add([]byte("no front matter"))
	f.Add([]byte("---\nmodel: m\n"))
	f.Add([]byte("---\nx: &a [1]\ntools: *a\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		agent, err := ParseAgent("agent.md", data)
		if err != nil {
			var p *Problem
			if !errors.As(err, &p) || p.Path != "agent.md" {
				t.Fatalf("error %v is not a *Problem naming the file", err)
			}
			return
		}
		if agent.MaxTurns < 0 {
			t.Errorf("MaxTurns = %d", agent.MaxTurns)
		}
		if agent.Prompt != strings.TrimSpace(agent.Prompt) {
			t.Errorf("Prompt %q is not trimmed", agent.Prompt)
		}
	})
}
