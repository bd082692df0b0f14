package capabilities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

// greeting is a capability switched on by a greeting.md beside agent.md:
// it adds the file's text to the prompt and a greet tool.
type greeting struct{}

func (greeting) Name() string { return "greeting" }

func (greeting) Detect(dir string) (string, bool) {
	_, err := os.Stat(filepath.Join(dir, "greeting.md"))
	return "greeting.md", err == nil
}

func (greeting) Load(ctx context.Context, route *router.Route, file string) (*capabilities.Contribution, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	words := strings.TrimSpace(string(data))
	greet := capabilities.Func("greet", "Greet someone by name.", func(ctx context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return words + ", " + in.Name + "!", nil
	})
	return &capabilities.Contribution{
		Tools:   []capabilities.Tool{greet},
		Prompts: []capabilities.Prompt{func(thread.State) string { return "Greet with: " + words }},
	}, nil
}

// A marker detects its file beside agent.md and contributes tools and
// prompt fragments; Prepare puts them together with the app's tools.
func ExampleMarker() {
	tree, err := router.Discover("testdata/example")
	if err != nil {
		fmt.Println(err)
		return
	}
	wave := capabilities.Func("wave", "Wave.", func(ctx context.Context, in struct{}) (string, error) { return "👋", nil })
	p, err := capabilities.Prepare(context.Background(), tree.Route("/hello"), capabilities.Input{
		Markers:  []capabilities.Marker{greeting{}},
		AppTools: []capabilities.AppTool{{Tool: wave}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range p.Capabilities {
		fmt.Println("capability:", c.Name, filepath.Base(c.File))
	}
	for _, t := range p.Tools {
		fmt.Println("tool:", t.Spec().Name)
	}
	fmt.Println("app tools:", p.AppTools())
	fmt.Println("prompt:", p.Prompts[0](nil))
	out, err := p.Tool("greet").Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(`{"name":"Ann"}`)})
	fmt.Println(string(out.Output), err)
	// Output:
	// capability: greeting greeting.md
	// tool: wave
	// tool: greet
	// app tools: [wave]
	// prompt: Greet with: Good morning
	// "Good morning, Ann!" <nil>
}

// shout is the input of a typed tool.
type shout struct {
	Text  string `json:"text" jsonschema:"what to shout"`
	Times int    `json:"times,omitempty" jsonschema:"how often; 1 when left out"`
}

// Func makes a tool of a typed function: its input schema comes from the
// input type, input that does not match it is an InputError the model
// sees, and the output is encoded as JSON.
func ExampleFunc() {
	tool := capabilities.Func("shout", "Shout a text.", func(ctx context.Context, in shout) ([]string, error) {
		return slices.Repeat([]string{strings.ToUpper(in.Text)}, max(in.Times, 1)), nil
	})
	fmt.Println(string(tool.Spec().Schema))
	for _, input := range []string{`{"text":"hi","times":2}`, `{"times":2}`} {
		out, err := tool.Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(input)})
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(string(out.Output))
	}
	// Output:
	// {"type":"object","properties":{"text":{"type":"string","description":"what to shout"},"times":{"type":"integer","description":"how often; 1 when left out"}},"required":["text"],"additionalProperties":false}
	// ["HI","HI"]
	// error: invalid input for tool "shout": validating root: required: missing properties: ["text"]
}
