package dawn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/dawntest"
)

// deployIn is the input of the deploy tool.
type deployIn struct {
	Env     string `json:"env"`
	Version string `json:"version"`
}

func deploy(_ context.Context, in deployIn) (string, error) {
	return "deployed " + in.Version + " to " + in.Env, nil
}

// deployPolicy lets staging deploys run, makes production deploys wait for
// a person, and refuses any other environment with a reason the model
// reads.
func deployPolicy(_ context.Context, args json.RawMessage) (dawn.Decision, error) {
	var in deployIn
	if err := json.Unmarshal(args, &in); err != nil {
		return dawn.Decision{}, err // an error denies the call
	}
	switch in.Env {
	case "staging":
		return dawn.Allow(), nil
	case "production":
		return dawn.Escalate("production deploys wait for a person"), nil
	}
	return dawn.Deny(fmt.Sprintf("there is no %q environment; deploy to staging or production", in.Env)), nil
}

// A constraint decides each call of a tool from its arguments: here a
// staging deploy runs, a deploy to a made-up environment is refused, and
// a production deploy parks the run until a person answers. In an app,
// the same options go to dawn.Main.
func ExampleConstrainTool() {
	t, end := exampleT()
	defer end()
	app := t.TempDir()
	_ = os.MkdirAll(filepath.Join(app, "ops"), 0o755)
	_ = os.WriteFile(filepath.Join(app, "ops", "agent.md"), []byte("You deploy."), 0o644)

	opts := []dawn.Option{
		dawn.Tool("deploy", "Deploy a version.", deploy),
		dawn.ConstrainTool("deploy", deployPolicy),
	}
	model := dawntest.Script().
		CallTool("deploy", deployIn{Env: "staging", Version: "1.4.2"}).
		CallTool("deploy", deployIn{Env: "qa", Version: "1.4.2"}).
		CallTool("deploy", deployIn{Env: "production", Version: "1.4.2"})
	srv := dawntest.New(t, app, model, dawntest.Options{Tools: dawn.Tools(opts...), Markers: dawn.Capabilities(opts...)})

	res := srv.Run(t, "t1", "/ops", "Ship 1.4.2 everywhere.")
	for _, e := range res.Events {
		switch e.Type {
		case "tool_result":
			var r struct {
				Output any `json:"output"`
			}
			_ = json.Unmarshal(e.Data, &r)
			fmt.Println("result:", r.Output)
		case "interrupt":
			var in struct {
				Kind   string `json:"kind"`
				Detail struct {
					ToolName string `json:"toolName"`
					Reason   string `json:"reason"`
				} `json:"detail"`
			}
			_ = json.Unmarshal(e.Data, &in)
			fmt.Println("waiting:", in.Kind, in.Detail.ToolName, "-", in.Detail.Reason)
		}
	}
	// Output:
	// result: deployed 1.4.2 to staging
	// result: there is no "qa" environment; deploy to staging or production
	// waiting: tool deploy - production deploys wait for a person
}

// exampleTB is the testing.TB of an Example function, which gets none:
// enough of one for dawntest.New and Run. A failure panics, which fails
// the example.
type exampleTB struct {
	testing.TB // not set: a method it does not define panics
	ctx        context.Context
	cancel     context.CancelFunc
	cleanups   []func()
	dirs       []string
}

func exampleT() (*exampleTB, func()) {
	t := &exampleTB{}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, func() {
		t.cancel()
		for _, f := range slices.Backward(t.cleanups) {
			f()
		}
		for _, d := range t.dirs {
			_ = os.RemoveAll(d)
		}
	}
}

func (t *exampleTB) Helper()                  {}
func (t *exampleTB) Context() context.Context { return t.ctx }
func (t *exampleTB) Cleanup(f func())         { t.cleanups = append(t.cleanups, f) }
func (t *exampleTB) Fatal(args ...any)        { panic(fmt.Sprint(args...)) }
func (t *exampleTB) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}
func (t *exampleTB) Errorf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (t *exampleTB) Logf(string, ...any)       {}
func (t *exampleTB) TempDir() string {
	d, err := os.MkdirTemp("", "dawn-example-")
	if err != nil {
		panic(err)
	}
	t.dirs = append(t.dirs, d)
	return d
}
