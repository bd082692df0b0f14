package capabilities

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/router"
)

// TestReservedToolNames: an app tool named like a built-in fails route
// preparation with an error naming the route, the tool and the reserved
// list, whether shared, scoped or from an MCP server; other names pass.
func TestReservedToolNames(t *testing.T) {
	const id = "/docs"
	list := strings.Join(ReservedToolNames, ", ")
	tests := []struct {
		name string
		tool AppTool
		want string // "" when the route prepares
	}{
		{"shared readFile", AppTool{Tool: namedTool("readFile")}, `route /docs: the app's shared tool "readFile" (dawn.Tool) is named "readFile", which is reserved for Dawn's built-in tools (` + list + `); rename the tool`},
		{"scoped readSkill", AppTool{Tool: namedTool("readSkill"), Route: id}, `route /docs: the app's tool "readSkill" scoped to /docs (dawn.RouteTool) is named "readSkill", which is reserved for Dawn's built-in tools (` + list + `); rename the tool`},
		{"from an MCP server", AppTool{Tool: namedTool("glob"), Origin: `MCP server "fs" (dawn.yaml)`}, `route /docs: MCP server "fs" (dawn.yaml) is named "glob", which is reserved for Dawn's built-in tools (` + list + `); rename the tool`},
		{"writeTodos", AppTool{Tool: namedTool("writeTodos")}, `route /docs: the app's shared tool "writeTodos" (dawn.Tool) is named "writeTodos", which is reserved for Dawn's built-in tools (` + list + `); rename the tool`},
		{"another case", AppTool{Tool: namedTool("ReadFile")}, ""},
		{"a plain name", AppTool{Tool: namedTool("lookupOrder")}, ""},
		{"scoped to another route", AppTool{Tool: namedTool("recall"), Route: "/other"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			route := routeDir(t, id, nil)
			_, err := Prepare(context.Background(), route, Input{AppTools: []AppTool{tt.tool}, AppToolsKnown: true})
			if got := errorList(err); !slices.Equal(got, nonEmpty(tt.want)) {
				t.Errorf("errors:\n%q\nwant\n%q", got, nonEmpty(tt.want))
			}
		})
	}
	// Every name of the list is refused.
	for _, name := range ReservedToolNames {
		route := routeDir(t, id, nil)
		if _, err := Prepare(context.Background(), route, Input{AppTools: []AppTool{{Tool: namedTool(name)}}}); err == nil {
			t.Errorf("an app tool named %q prepared", name)
		}
	}
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// routeMarker detects itself through RouteDetector, with a file in the
// app folder above the route.
type routeMarker struct {
	fakeMarker
	seen **router.Route
}

func (m routeMarker) DetectRoute(r *router.Route) (string, bool) {
	*m.seen = r
	return filepath.Join(r.AppDir(), "APP.md"), true
}

// TestRouteDetector: a marker with DetectRoute is asked in place of Detect,
// gets the route, and an absolute file is its marker file as it is.
func TestRouteDetector(t *testing.T) {
	app := t.TempDir()
	dir := filepath.Join(app, "support", "[tenant]")
	route := &router.Route{ID: "/support/[tenant]", Dir: dir, RelDir: "support/[tenant]"}
	var seen *router.Route
	var loaded []string
	m := routeMarker{fakeMarker: fakeMarker{name: "app", file: "never.md", loaded: &loaded}, seen: &seen}
	p, err := Prepare(context.Background(), route, Input{Markers: []Marker{m}})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(app, "APP.md")
	if seen != route || !slices.Equal(loaded, []string{want}) || len(p.Capabilities) != 1 || p.Capabilities[0].File != want {
		t.Fatalf("DetectRoute got %v, Load got %v, capabilities %+v; want the route and %s", seen, loaded, p.Capabilities, want)
	}
}
