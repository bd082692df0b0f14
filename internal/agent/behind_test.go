package agent_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/thread"
)

// behindHost is a test host that can write steps behind, and records how
// each step was saved.
type behindHost struct {
	*testHost
	kinds []string
}

func (h *behindHost) Checkpoint(context.Context, []thread.Message, thread.State) error {
	h.kinds = append(h.kinds, "sync")
	return nil
}

func (h *behindHost) CheckpointBehind(context.Context, []thread.Message, thread.State) error {
	h.kinds = append(h.kinds, "behind")
	return nil
}

// TestWhatIsWrittenBehind: the step that ends a tool turn is written
// behind where the host can; the record of started calls and the last
// step are not.
func TestWhatIsWrittenBehind(t *testing.T) {
	for _, record := range []bool{false, true} {
		charge := capabilities.Func("charge", "charges", func(context.Context, echoIn) (string, error) { return "charged", nil })
		p := prepare(t, map[string]string{"r/agent.md": "P"}, capabilities.AppTool{Tool: charge})
		model := dawntest.Script().CallTool("charge", echoIn{Text: "k1"}).CallTool("charge", echoIn{Text: "k2"}).Reply("done")
		host := &behindHost{testHost: &testHost{rec: &recorder{}}}
		cfg := agent.Config{Route: p, Model: model, ModelName: "script", Host: host, Park: true, RecordStarted: record}
		if _, err := agent.Run(context.Background(), cfg, nil, nil, []thread.Message{{Role: thread.RoleUser, Content: "go"}}); err != nil {
			t.Fatal(err)
		}
		want := []string{"behind", "behind", "sync"}
		if record {
			want = []string{"sync", "behind", "sync", "behind", "sync"}
		}
		if !slices.Equal(host.kinds, want) {
			t.Errorf("RecordStarted %v: steps saved %v, want %v", record, host.kinds, want)
		}
	}
}
