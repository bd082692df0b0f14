package router

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeApp writes files (slash-separated paths relative to the app folder,
// mapped to their contents) into a new temporary app folder.
func writeApp(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// agentMD is a small valid agent.md.
const agentMD = "---\ndescription: test\n---\nBe brief.\n"

// routeFromID builds a route from an id without touching disk, or returns
// an error for an id that is not well formed.
func routeFromID(id string) (*Route, error) {
	segs, err := parseID(id)
	if err != nil {
		return nil, err
	}
	kind := KindAgent
	if i := strings.LastIndex(id, "/subagents/"); i >= 0 && !strings.Contains(id[i+len("/subagents/"):], "/") {
		kind = KindSubagent
	}
	r := &Route{ID: id, Kind: kind, Segments: segs}
	if kind == KindSubagent {
		r.Parent = idOf(segs[:len(segs)-2])
	}
	if msg := checkParams(r); msg != "" {
		return nil, &Problem{Route: id, Msg: msg}
	}
	return r, nil
}

// parseID splits a route id into segments.
func parseID(id string) ([]Segment, error) {
	if id == "/" {
		return nil, nil
	}
	if !strings.HasPrefix(id, "/") {
		return nil, &Problem{Route: id, Msg: "an id starts with /"}
	}
	var segs []Segment
	for _, part := range strings.Split(id[1:], "/") {
		seg, group, err := ParseSegment(part)
		if err != nil {
			return nil, err
		}
		if group {
			return nil, &Problem{Route: id, Msg: "an id holds no groups"}
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// treeOf builds a tree from route ids, which must be valid and distinct.
func treeOf(t testing.TB, ids ...string) *Tree {
	t.Helper()
	routes := make([]*Route, 0, len(ids))
	for _, id := range ids {
		r, err := routeFromID(id)
		if err != nil {
			t.Fatalf("route %s: %v", id, err)
		}
		routes = append(routes, r)
	}
	return newTree("", routes)
}
