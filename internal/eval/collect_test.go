package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/router"
)

const oneCase = "cases:\n  - name: c\n    input: {message: hi, params: {tenant: acme, slug: a/b}}\n    expect: {max_turns: 3}\n"

func writeTree(t *testing.T, files map[string]string) *router.Tree {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := router.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func TestCollect(t *testing.T) {
	tree := writeTree(t, map[string]string{
		"support/[tenant]/agent.md":         "A",
		"support/[tenant]/evals/a.yaml":     oneCase,
		"support/[tenant]/evals/b.yml":      strings.Replace(oneCase, "name: c", "name: d", 1),
		"support/[tenant]/evals/notes.txt":  "not a case file",
		"support/[tenant]/evals/_off.yaml":  "broken: [",
		"(docs)/docs/[...slug]/agent.md":    "A",
		"(docs)/docs/[...slug]/evals/x.yml": oneCase,
		"research/agent.md":                 "A",
		"research/evals/bad.yaml":           "cases:\n  - name: c\n    input: {message: hi}\n    expect: {max_turn: 3}\n",
	})
	cases, err := Collect("app", tree)
	want := filepath.Join("app", "research", "evals", "bad.yaml") + `:4: case "c": expect.max_turn: field not found`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Collect error = %v\nwant %s", err, want)
	}
	var got []string
	for _, c := range cases {
		got = append(got, c.Route+" "+c.Name+" "+c.File)
	}
	wantCases := []string{
		"/docs/[...slug] c " + filepath.Join("app", "(docs)", "docs", "[...slug]", "evals", "x.yml"),
		"/support/[tenant] c " + filepath.Join("app", "support", "[tenant]", "evals", "a.yaml"),
		"/support/[tenant] d " + filepath.Join("app", "support", "[tenant]", "evals", "b.yml"),
	}
	if strings.Join(got, "\n") != strings.Join(wantCases, "\n") {
		t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantCases, "\n"))
	}

	paths := map[string]string{}
	for _, c := range cases {
		p, err := c.Path(tree)
		if err != nil {
			t.Fatal(err)
		}
		paths[c.Route] = p
	}
	if paths["/support/[tenant]"] != "/support/acme" || paths["/docs/[...slug]"] != "/docs/a/b" {
		t.Errorf("paths = %v", paths)
	}
	missing := Case{Name: "m", File: "f.yaml", Route: "/support/[tenant]"}
	if _, err := missing.Path(tree); err == nil || !strings.Contains(err.Error(), `f.yaml: case "m": input.params.tenant is missing`) {
		t.Errorf("Path without the param: %v", err)
	}

	for route, n := range map[string]int{"": 3, "/support/[tenant]": 2, "/support/globex": 2, "/docs/x/y": 1, "/research": 0} {
		sel, err := Select(tree, cases, route)
		if err != nil || len(sel) != n {
			t.Errorf("Select(%q) = %d cases, %v; want %d", route, len(sel), err, n)
		}
	}
	if _, err := Select(tree, cases, "/nowhere"); err == nil || !strings.Contains(err.Error(), "--route /nowhere") || strings.Count(err.Error(), "dawn routes") != 1 {
		t.Errorf("Select of an unknown route: %v", err)
	}
}
