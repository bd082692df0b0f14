package typegen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pathTest is a test file added to the generated package for the test app:
// it runs the generated Path methods and decodes JSON into generated types.
const pathTest = `package full

import (
	"encoding/json"
	"testing"
)

func TestPaths(t *testing.T) {
	tests := []struct{ got, want string }{
		{SupportTenantParams{Tenant: "acme"}.Path(), "/support/acme"},
		{SupportTenantParams{Tenant: "a b/c"}.Path(), "/support/a%20b%2Fc"},
		{DocsSlugParams{Slug: []string{"guide"}}.Path(), "/docs/guide"},
		{DocsSlugParams{Slug: []string{"a", "b c"}}.Path(), "/docs/a/b%20c"},
		{FilesPathParams{}.Path(), "/files"},
		{FilesPathParams{Path2: []string{"x", "y"}}.Path(), "/files/x/y"},
		{OrgsOrgReposRepoParams{Org: "go", Repo: "tools"}.Path(), "/orgs/go/repos/tools"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: Path() = %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestDecode(t *testing.T) {
	var s SupportTenantState
	raw := ` + "`" + `{"messages":[{"role":"user","content":"hi"}],"todos":[{"content":"Read","status":"completed"}],"ticket_id":"T-1","notes":["a"]}` + "`" + `
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 1 || s.Todos[0].Status != StatusCompleted || s.TicketID != "T-1" || len(s.Notes) != 1 {
		t.Errorf("state = %+v", s)
	}
	in := SupportTenantPlaceOrderInput{Customer: "c1", Lines: []SupportTenantPlaceOrderInputLinesItem{{Sku: "s", Qty: 2}}}
	out, _ := json.Marshal(in)
	if string(out) != ` + "`" + `{"customer":"c1","lines":[{"sku":"s","qty":2}]}` + "`" + ` {
		t.Errorf("input JSON = %s", out)
	}
}
`

// restPathTest checks optional catch-alls at the root and mid-route.
const restPathTest = `package rest

import "testing"

func TestPaths(t *testing.T) {
	tests := []struct{ got, want string }{
		{RestParams{}.Path(), "/"},
		{RestParams{Rest: []string{"a", "b"}}.Path(), "/a/b"},
		{AXMoreParams{X: "1"}.Path(), "/a/1"},
		{AXMoreParams{X: "1", More: []string{"m"}}.Path(), "/a/1/m"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: Path() = %q, want %q", i, tt.got, tt.want)
		}
	}
}
`

// TestGeneratedGoCompiles writes generated packages into a folder inside
// the module and runs go vet and go test on them.
func TestGeneratedGoCompiles(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	if testing.Short() {
		t.Skip("runs the go tool; skipped with -short")
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp("testdata", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })

	apps := []struct {
		pkg   string
		files map[string]string
		test  string
	}{
		{"full", testAppFiles, pathTest},
		{"empty", map[string]string{}, ""},
		{"rest", map[string]string{"[[...rest]]/agent.md": agentMD, "a/[x]/[[...more]]/agent.md": agentMD}, restPathTest},
	}
	var pkgs []string
	for _, a := range apps {
		var tools = testAppTools()
		if a.pkg != "full" {
			tools = nil
		}
		files, err := Generate(loadApp(t, writeApp(t, a.files), tools...), Options{Package: a.pkg})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, a.pkg)
		if _, err := Sync(dir, files); err != nil {
			t.Fatal(err)
		}
		if a.test != "" {
			if err := os.WriteFile(filepath.Join(dir, "path_test.go"), []byte(a.test), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(dir))
	}
	for _, args := range [][]string{{"vet"}, {"test", "-count=1"}} {
		cmd := exec.Command(goTool, append(args, pkgs...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
