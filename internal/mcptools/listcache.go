package mcptools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's last tool listing is kept on disk in the app's .dawn folder,
// keyed by the server's settings, so that the commands that only read an
// app (dawn routes, check, typegen; see capabilities.WithSavedToolLists) do
// not start the server every time. Serving commands always list afresh
// and refresh the file.

// listingFile is where the listing of s, run from appDir, is kept.
func listingFile(appDir string, s Server) string {
	sum := sha256.Sum256([]byte(poolKey(appDir, s)))
	return filepath.Join(appDir, ".dawn", "mcp-tools", s.Name+"-"+hex.EncodeToString(sum[:8])+".json")
}

// savedListing reads the listing kept for s; ok is false when there is
// none or it cannot be read.
func savedListing(appDir string, s Server) (tools []*mcp.Tool, ok bool) {
	data, err := os.ReadFile(listingFile(appDir, s))
	if err != nil || json.Unmarshal(data, &tools) != nil {
		return nil, false
	}
	return tools, true
}

// saveListing keeps tools as the listing of s. A folder that cannot be
// written only costs the next read-only command a server start.
func saveListing(appDir string, s Server, tools []*mcp.Tool) {
	data, err := json.Marshal(tools)
	if err != nil {
		return
	}
	path := listingFile(appDir, s)
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	tmp := path + ".tmp"
	if os.WriteFile(tmp, data, 0o644) == nil {
		_ = os.Rename(tmp, path)
	}
}

// slowStart is how long a server may take to start before Dawn says it is
// waiting for it (npx may be downloading the server).
const slowStart = time.Second

// sayWhenSlow prints a line to stderr if the server has not started after
// slowStart; the returned func stops the timer.
func (c *conn) sayWhenSlow() (stop func() bool) {
	t := time.AfterFunc(slowStart, func() {
		fmt.Fprintf(os.Stderr, "dawn: starting MCP server %q (%s); npx may be downloading it on first use (up to %v)\n", c.server.Name, c.server.Transport(), connectTimeout)
	})
	return t.Stop
}
