// Package greeting is a capability written outside Dawn's module: a route
// folder with a greeting.md beside agent.md gets a greet tool that greets
// with the file's words, and a greeted stream event after each greeting.
package greeting

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
)

// Marker returns the greeting capability.
func Marker() capabilities.Marker { return marker{} }

type marker struct{}

func (marker) Name() string { return "greeting" }

// Detect switches the capability on for a route folder with a greeting.md.
func (marker) Detect(dir string) (string, bool) {
	_, err := os.Stat(filepath.Join(dir, "greeting.md"))
	return "greeting.md", err == nil
}

// Load reads the greeting and contributes the greet tool and the greeted
// event.
func (marker) Load(_ context.Context, _ *router.Route, file string) (*capabilities.Contribution, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return &capabilities.Contribution{
		Tools: []capabilities.Tool{greet{word: strings.TrimSpace(string(text))}},
		Transformers: []capabilities.Transformer{func(ev capabilities.ToolEvent) []stream.Event {
			if ev.Name != "greet" || ev.Err != nil {
				return nil
			}
			return []stream.Event{stream.New("greeted", ev.Output)}
		}},
	}, nil
}

// greet greets someone by name.
type greet struct{ word string }

func (greet) Spec() capabilities.ToolSpec {
	return capabilities.ToolSpec{
		Name: "greet", Description: "Greet someone by name.",
		Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
}

func (g greet) Call(_ context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	var in struct{ Name string }
	if err := json.Unmarshal(inv.Input, &in); err != nil || in.Name == "" {
		return capabilities.Result{}, errors.New(`greet needs {"name": "..."}`)
	}
	out, err := json.Marshal(g.word + ", " + in.Name + "!")
	return capabilities.Result{Output: out}, err
}
