package planning

import (
	"context"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"gopkg.in/yaml.v3"
)

func node(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// TestConfigureLimits: planning owns limits.todos and limits.todo_bytes of
// dawn.yaml; they reach writeTodos through the configured marker, not the
// context.
func TestConfigureLimits(t *testing.T) {
	cs, ok := Marker().(capabilities.ConfigSection)
	if !ok {
		t.Fatal("the planning marker is not a ConfigSection")
	}
	if got := strings.Join(cs.ConfigKeys(), ","); got != "limits.todos,limits.todo_bytes" {
		t.Errorf("ConfigKeys = %s", got)
	}
	m, err := cs.Configure(map[string]*yaml.Node{"limits.todos": node(t, "2"), "limits.todo_bytes": node(t, "10")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := writeFile(t, dir, MarkerFile, "- [ ] x\n")
	route := &router.Route{ID: "/r", Dir: dir}
	c, err := m.Load(context.Background(), route, file)
	if err != nil {
		t.Fatal(err)
	}
	tool := c.Tools[0]
	cases := []struct{ input, want string }{
		{`{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"pending"},{"content":"c","status":"pending"}]}`, "todos has 3 items, over the limit of 2"},
		{`{"todos":[{"content":"eleven byte","status":"pending"}]}`, "todos[0].content is 11 bytes, over the limit of 10 bytes"},
	}
	for _, tc := range cases {
		_, err := tool.Call(context.Background(), capabilities.Invocation{Input: []byte(tc.input)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
	// The receiver keeps the defaults.
	c, err = Marker().Load(context.Background(), route, file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tools[0].Call(context.Background(), capabilities.Invocation{Input: []byte(cases[0].input)}); err != nil {
		t.Errorf("unconfigured marker: %v", err)
	}
}

func TestConfigureLimitErrors(t *testing.T) {
	cs := Marker().(capabilities.ConfigSection)
	tests := []struct{ key, src, want string }{
		{"limits.todos", "-1", "limits.todos is -1; a limit must be positive, or left out for the default"},
		{"limits.todo_bytes", "lots", "limits.todo_bytes must be a whole number, not \"lots\""},
		{"limits.todos", "[1]", "limits.todos must be a whole number"},
	}
	for _, tt := range tests {
		_, err := cs.Configure(map[string]*yaml.Node{tt.key: node(t, tt.src)})
		if err == nil || err.Error() != tt.want && !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %s: err = %v, want %s", tt.key, tt.src, err, tt.want)
		}
	}
}
