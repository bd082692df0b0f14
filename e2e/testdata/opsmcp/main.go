// Command opsmcp is a stdio MCP server for the e2e approval tests: its one
// tool, deploy, appends "env version" as a line to the file named by its
// first argument, so a test can see whether (and with which arguments) a
// call that waited for a person ran.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type deployIn struct {
	Env     string `json:"env" jsonschema:"the environment: prod or staging"`
	Version string `json:"version" jsonschema:"the version to deploy"`
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: opsmcp LOGFILE")
	}
	logFile := os.Args[1]
	s := mcp.NewServer(&mcp.Implementation{Name: "ops", Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "deploy", Description: "Deploy a version to an environment."}, func(_ context.Context, _ *mcp.CallToolRequest, in deployIn) (*mcp.CallToolResult, any, error) {
		f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, in.Env, in.Version); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed " + in.Version + " to " + in.Env}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
