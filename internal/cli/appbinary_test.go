package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/gomod"
	"github.com/dawn-go/dawn/internal/scaffold"
)

// TestStockBinaryServesTheAppsTools: the stock dawn binary, given an app
// whose main package registers Go tools, runs the command in the app's own
// binary, so the routes it lists (and serves) have those tools: the
// example app's main.go beside its routes, and a `dawn new` app whose
// main.go sits at the module root beside app/.
func TestStockBinaryServesTheAppsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the apps' binaries")
	}
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test")
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	newApp := filepath.Join(t.TempDir(), "hello")
	if _, err := scaffold.Write(newApp, scaffold.Options{Replace: root}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ app, route, tool string }{
		{filepath.Join(root, "examples", "app"), "/support/[tenant]", "lookupAccount"},
		{filepath.Join(newApp, "app"), "/assistant", "countWords"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run([]string{"routes", "--app", c.app, "--json"}, Config{Stock: true, Stdout: &stdout, Stderr: &stderr})
		if code != ExitOK {
			t.Fatalf("dawn routes --app %s exited %d:\n%s", c.app, code, stderr.String())
		}
		if tools := routeTools(t, stdout.Bytes(), c.route); !slices.Contains(tools, c.tool) {
			t.Errorf("stock dawn routes --app %s: %s has tools %q, want %s among them", c.app, c.route, tools, c.tool)
		}
		if !strings.Contains(stderr.String(), "built the app in") {
			t.Errorf("stderr does not say the app's binary was built:\n%s", stderr.String())
		}
	}
}

// routeTools returns the tool names dawn routes --json lists for route.
func routeTools(t *testing.T, data []byte, route string) []string {
	t.Helper()
	var routes []struct {
		ID    string   `json:"id"`
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal(data, &routes); err != nil {
		t.Fatalf("dawn routes --json: %v\n%s", err, data)
	}
	for _, r := range routes {
		if r.ID == route {
			return r.Tools
		}
	}
	return nil
}
