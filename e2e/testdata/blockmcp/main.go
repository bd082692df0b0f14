// Command blockmcp is a stdio MCP server for the e2e tests of tool-call
// delivery: each call of apply or sync appends "tool key" as a line to the
// file named by its first argument, so a test can count the calls that
// ran. The first call of a key then never answers (the test kills Dawn
// meanwhile); a later one answers "applied key (run N)". sync is
// annotated idempotent (idempotentHint), apply is not. hang never answers.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type keyIn struct {
	Key string `json:"key" jsonschema:"what to apply"`
}

var mu sync.Mutex

// record appends "tool key" to logFile and returns how many lines for key
// the file now holds.
func record(logFile, tool, key string) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	if _, err := fmt.Fprintln(f, tool, key); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	data, err := os.ReadFile(logFile)
	if err != nil {
		return 0, err
	}
	return strings.Count(string(data), tool+" "+key+"\n"), nil
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: blockmcp LOGFILE")
	}
	logFile := os.Args[1]
	s := mcp.NewServer(&mcp.Implementation{Name: "block", Version: "v1"}, nil)
	handler := func(tool string) mcp.ToolHandlerFor[keyIn, any] {
		return func(_ context.Context, _ *mcp.CallToolRequest, in keyIn) (*mcp.CallToolResult, any, error) {
			n, err := record(logFile, tool, in.Key)
			if err != nil {
				return nil, nil, err
			}
			if n == 1 {
				select {} // the first run never answers
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("applied %s (run %d)", in.Key, n)}}}, nil, nil
		}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "apply", Description: "Apply a change."}, handler("apply"))
	mcp.AddTool(s, &mcp.Tool{Name: "sync", Description: "Sync a mirror; safe to repeat.", Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, handler("sync"))
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		select {}
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
