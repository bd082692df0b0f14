package mcptools

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/docstext"
	"github.com/dawn-go/dawn/internal/yamldoc"
)

// TestREADMEExample parses the mcp: example of the README's MCP tools
// section, so the documented shape is the one dawn.yaml accepts.
func TestREADMEExample(t *testing.T) {
	data, err := docstext.Read("../..")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(data, "## MCP tools\n")
	if !ok {
		t.Fatal("README has no MCP tools section")
	}
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("the MCP tools section has no yaml block")
	}
	root, err := yamldoc.Mapping([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	var servers []Server
	for key, val := range yamldoc.Pairs(root) {
		if key.Value == Key {
			servers, err = parseServers(val)
		}
	}
	if err != nil {
		t.Fatalf("the README example does not parse: %v", err)
	}
	want := []Server{
		{Name: "everything", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything", "stdio"}},
		{Name: "docs", URL: "https://docs.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${MCP_TOKEN}"}},
	}
	if !reflect.DeepEqual(servers, want) {
		t.Errorf("README servers = %+v, want %+v", servers, want)
	}
	t.Setenv("MCP_TOKEN", "abc")
	c := &conn{server: servers[1]}
	if _, _, err := c.transport(); err != nil {
		t.Errorf("the README's docs server: %v", err)
	}
}
