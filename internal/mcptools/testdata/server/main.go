// Command server is an MCP server built with the official Go SDK, for the
// mcptools tests: over stdio by default, or as a streamable-HTTP handler
// through NewServer.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sum struct {
	Sum int `json:"sum"`
}

type pid struct {
	PID int `json:"pid"`
}

func main() {
	// PIDFILE, when set, gets a line with this process's id, so tests can
	// count the server processes Dawn started.
	if path := os.Getenv("PIDFILE"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "dawn-test", Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."}, func(ctx context.Context, r *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers."}, func(ctx context.Context, r *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, sum, error) {
		return nil, sum{in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("the fail tool failed, as it always does")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "The server's process id."}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, pid, error) {
		return nil, pid{os.Getpid()}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "exit", Description: "Exit the server process."}, func(ctx context.Context, r *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
