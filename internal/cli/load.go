package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/dawn-go/dawn/internal/app"
)

// loadApp loads the app folder with the binary's tools and markers.
func loadApp(ctx context.Context, cfg *Config, dir string) (*app.App, error) {
	known := cfg.ToolsKnown
	if cfg.Stock && !hasGoMain(dir) {
		known = true // no Go code: the app has no tools beyond what we know
	}
	return app.Load(ctx, dir, app.Options{Tools: cfg.Tools, ToolsKnown: known, Markers: cfg.Markers})
}

// hasGoMain reports whether dir holds a Go main package (an app with tools).
func hasGoMain(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil && strings.Contains(string(data), "package main") {
			return true
		}
	}
	return false
}
