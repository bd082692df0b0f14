package router

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tree := treeOf(t,
		"/",
		"/support",
		"/support/[tenant]",
		"/support/help",
		"/support/[tenant]/tickets/[ticket]",
		"/support/[tenant]/subagents/helper",
		"/docs/[...slug]",
		"/docs/intro",
		"/files/[[...path]]",
		"/a/[x]/c",
		"/a/b/[y]",
		"/a/[...rest]",
		"/research",
		"/research/subagents/researcher",
	)
	none := map[string]string{}
	tests := []struct {
		path   string
		want   string // route id; "" means not found
		params map[string]string
	}{
		{"/support/acme", "/support/[tenant]", map[string]string{"tenant": "acme"}},
		{"/support/help", "/support/help", none},
		{"/support/help/", "/support/help", none},
		{"/support", "/support", none},
		{"support/acme", "/support/[tenant]", map[string]string{"tenant": "acme"}},
		{"/support/acme#agent", "/support/[tenant]", map[string]string{"tenant": "acme"}},
		{"/support/acme/#agent", "/support/[tenant]", map[string]string{"tenant": "acme"}},
		{"/support/[tenant]", "/support/[tenant]", none},
		{"/support/[tenant]#agent", "/support/[tenant]", none},
		{"/support/[tenant]/", "/support/[tenant]", none},
		{"/support/[other]", "", nil},
		{"/support/acme/tickets/42", "/support/[tenant]/tickets/[ticket]", map[string]string{"tenant": "acme", "ticket": "42"}},
		{"/docs/a/b/c", "/docs/[...slug]", map[string]string{"slug": "a/b/c"}},
		{"/docs/a", "/docs/[...slug]", map[string]string{"slug": "a"}},
		{"/docs/intro", "/docs/intro", none},
		{"/docs/intro/more", "/docs/[...slug]", map[string]string{"slug": "intro/more"}},
		{"/docs", "", nil},
		{"/files", "/files/[[...path]]", map[string]string{"path": ""}},
		{"/files/", "/files/[[...path]]", map[string]string{"path": ""}},
		{"/files/x/y", "/files/[[...path]]", map[string]string{"path": "x/y"}},
		{"/a/b/c", "/a/b/[y]", map[string]string{"y": "c"}},
		{"/a/z/c", "/a/[x]/c", map[string]string{"x": "z"}},
		{"/a/z/d", "/a/[...rest]", map[string]string{"rest": "z/d"}},
		{"/a/b/c/d", "/a/[...rest]", map[string]string{"rest": "b/c/d"}},
		{"/a/b", "/a/[...rest]", map[string]string{"rest": "b"}},
		{"/a", "", nil},
		{"/research/subagents/researcher", "/research/subagents/researcher", none},
		{"/support/[tenant]/subagents/helper", "/support/[tenant]/subagents/helper", none},
		{"/support/acme/subagents/helper", "", nil},
		{"/", "/", none},
		{"", "/", none},
		{"#agent", "/", none},
		{"/nope", "", nil},
		{"/SUPPORT", "", nil},
		// Params are percent-decoded once.
		{"/support/ac%20me", "/support/[tenant]", map[string]string{"tenant": "ac me"}},
		{"/support/%61cme", "/support/[tenant]", map[string]string{"tenant": "acme"}},
		{"/support/100%2525", "/support/[tenant]", map[string]string{"tenant": "100%25"}},
		{"/support/a+b%23c", "/support/[tenant]", map[string]string{"tenant": "a+b#c"}},
		{"/support/%5Bx%5D", "/support/[tenant]", map[string]string{"tenant": "[x]"}},
		{"/support/caf%C3%A9", "/support/[tenant]", map[string]string{"tenant": "café"}},
		{"/docs/a%20b/c", "/docs/[...slug]", map[string]string{"slug": "a b/c"}},
		{"/%73upport/help", "/support/help", none},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r, params, err := tree.Match(tt.path)
			if tt.want == "" {
				var nf *NotFoundError
				if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) || nf.Path != tt.path {
					t.Fatalf("Match(%q) = %v, %v, %v; want a *NotFoundError", tt.path, r, params, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Match(%q) error = %v", tt.path, err)
			}
			if r.ID != tt.want || !reflect.DeepEqual(params, tt.params) {
				t.Errorf("Match(%q) = %s %v, want %s %v", tt.path, r.ID, params, tt.want, tt.params)
			}
		})
	}
}

func TestMatchSpecificity(t *testing.T) {
	tree := treeOf(t, "/x/y", "/x/[a]", "/x/[...b]", "/x/[[...c]]", "/[p]/y/z", "/[[...all]]")
	tests := []struct {
		path, want string
		params     map[string]string
	}{
		{"/x/y", "/x/y", map[string]string{}},
		{"/x/z", "/x/[a]", map[string]string{"a": "z"}},
		{"/x/z/w", "/x/[...b]", map[string]string{"b": "z/w"}},
		{"/x", "/x/[[...c]]", map[string]string{"c": ""}},
		{"/x/y/z", "/x/[...b]", map[string]string{"b": "y/z"}},
		{"/q/y/z", "/[p]/y/z", map[string]string{"p": "q"}},
		{"/q", "/[[...all]]", map[string]string{"all": "q"}},
		{"/", "/[[...all]]", map[string]string{"all": ""}},
	}
	for _, tt := range tests {
		r, params, err := tree.Match(tt.path)
		if err != nil || r.ID != tt.want || !reflect.DeepEqual(params, tt.params) {
			t.Errorf("Match(%q) = %v %v %v, want %s %v", tt.path, r, params, err, tt.want, tt.params)
		}
	}
}

func TestMatchInvalidPath(t *testing.T) {
	tree := treeOf(t, "/", "/[[...all]]", "/a/[...rest]")
	tests := []struct{ path, want string }{
		{"/a/../b", `".." parts`},
		{"/a/./b", `"." parts`},
		{"..", `".." parts`},
		{"//a", "empty part"},
		{"/a//b", "empty part"},
		{"/a//", "empty part"},
		{`/a\b`, "backslash"},
		{"/a\x00b", "NUL"},
		// Checked after percent-decoding each part once.
		{"/a/..%2fetc", `"/"`},
		{"/a/..%2Fetc", `"/"`},
		{"/a/%2e%2e", `".." parts`},
		{"/a/%2E", `"." parts`},
		{"/a/x/%2e%2e/y", `".." parts`},
		{"/a/a%00b", "NUL"},
		{"/a/a%5cb", "backslash"},
		{"/a/a%0ab", "control character"},
		{"/a/a\nb", "control character"},
		{"/a/a\tb", "control character"},
		{"/a/a%7fb", "control character"},
		{"/a/a%C2%85b", "control character"},
		{"/a/a%ffb", "UTF-8"},
		{"/a/a%zzb", "escape"},
		{"/a/a%2", "escape"},
		{"/a/" + strings.Repeat("x", MaxParamBytes+1), "longer than"},
		{"/a/" + strings.Repeat("%41", MaxParamBytes+1), "longer than"},
		{"/a/" + strings.Repeat("xy/", MaxParamBytes/2), "longer than"},
		{"/" + strings.Repeat("x", 100<<10), "longer than"},
	}
	for _, tt := range tests {
		r, _, err := tree.Match(tt.path)
		if !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Match(%.80q) = %v, %.300v; want ErrInvalidPath saying %q", tt.path, r, err, tt.want)
		}
		if err != nil && len(err.Error()) > 500 {
			t.Errorf("Match(%.80q) error is %d bytes long; it should quote a long path shortened", tt.path, len(err.Error()))
		}
		if errors.Is(err, ErrNotFound) {
			t.Errorf("Match(%q) error %v is also ErrNotFound", tt.path, err)
		}
	}
}

func TestMatchManyParams(t *testing.T) {
	id := ""
	path := ""
	want := map[string]string{}
	for i := range 12 {
		name := string(rune('a' + i))
		id += "/[" + name + "]"
		path += "/v" + name
		want[name] = "v" + name
	}
	r, params, err := treeOf(t, id).Match(path)
	if err != nil || r.ID != id || !reflect.DeepEqual(params, want) {
		t.Errorf("Match(%q) = %v, %v, %v; want %s %v", path, r, params, err, id, want)
	}
}

func TestMatchNilTree(t *testing.T) {
	var tree *Tree
	if _, _, err := tree.Match("/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Match() error = %v, want ErrNotFound", err)
	}
	if tree.Route("/x") != nil {
		t.Error("Route() is not nil")
	}
}

func TestRoutePath(t *testing.T) {
	tests := []struct {
		id      string
		params  map[string]string
		want    string
		wantErr string
	}{
		{"/", nil, "/", ""},
		{"/support", nil, "/support", ""},
		{"/support/[tenant]", map[string]string{"tenant": "acme", "extra": "x"}, "/support/acme", ""},
		{"/support/[tenant]/tickets/[id]", map[string]string{"tenant": "acme", "id": "7"}, "/support/acme/tickets/7", ""},
		{"/docs/[...slug]", map[string]string{"slug": "a/b"}, "/docs/a/b", ""},
		{"/docs/[[...slug]]", nil, "/docs", ""},
		{"/docs/[[...slug]]", map[string]string{"slug": ""}, "/docs", ""},
		{"/docs/[[...slug]]", map[string]string{"slug": "a/b"}, "/docs/a/b", ""},
		{"/support/[tenant]", nil, "", `missing param "tenant"`},
		{"/support/[tenant]/tickets/[id]", map[string]string{"tenant": "acme"}, "", `missing param "id"`},
		{"/docs/[...slug]", map[string]string{"slug": ""}, "", "empty"},
		{"/support/[tenant]", map[string]string{"tenant": "a/b"}, "", `may not contain "/"`},
		{"/support/[tenant]", map[string]string{"tenant": ".."}, "", `".."`},
		{"/docs/[...slug]", map[string]string{"slug": "a//b"}, "", "empty"},
		{"/support/[tenant]", map[string]string{"tenant": "a#b"}, "/support/a%23b", ""},
		{"/support/[tenant]", map[string]string{"tenant": "a b"}, "/support/a%20b", ""},
		{"/support/[tenant]", map[string]string{"tenant": "[x]"}, "/support/%5Bx%5D", ""},
		{"/docs/[...slug]", map[string]string{"slug": "a b/c%d"}, "/docs/a%20b/c%25d", ""},
		{"/support/[tenant]", map[string]string{"tenant": "a\x00b"}, "", "NUL"},
		{"/support/[tenant]", map[string]string{"tenant": "a\nb"}, "", "control character"},
		{"/support/[tenant]", map[string]string{"tenant": `a\b`}, "", "backslash"},
		{"/support/[tenant]", map[string]string{"tenant": strings.Repeat("x", MaxParamBytes+1)}, "", "longer than"},
	}
	for _, tt := range tests {
		r, err := routeFromID(tt.id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Path(tt.params)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.id) {
				t.Errorf("%s.Path(%.100v) = %.100q, %.300v; want an error naming the route and saying %q", tt.id, tt.params, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s.Path(%v) = %q, %v; want %q", tt.id, tt.params, got, err, tt.want)
		}
	}
}

func TestMatchBroken(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"good/agent.md":         agentMD,
		"bad/agent.md":          "---\nmodel: [x\n---\nBad.\n",
		"shop/[store]/agent.md": "---\nbogus: 1\n---\nShop.\n",
	})
	tree, err := Discover(dir)
	if err == nil {
		t.Fatal("Discover reported no problem for two broken agent.md files")
	}
	for path, want := range map[string]string{
		"/bad": "/bad", "/shop/[store]": "/shop/[store]", "/shop/acme": "/shop/[store]",
		"/good": "", "/nowhere": "", "/shop": "",
	} {
		id, ok := tree.MatchBroken(path)
		if id != want || ok != (want != "") {
			t.Errorf("MatchBroken(%q) = %q, %v; want %q", path, id, ok, want)
		}
	}
	if _, _, err := tree.Match("/bad"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Match(/bad) = %v, want not found: a broken route is not served", err)
	}
	var none *Tree
	if _, ok := none.MatchBroken("/bad"); ok {
		t.Error("a nil tree has a broken route")
	}
}
