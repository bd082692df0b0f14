package runner

import (
	"context"
	"errors"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/store"
)

// toolOutputs is the store's tool outputs of one thread as hooks and tools
// see them (capabilities.ToolOutputStore).
type toolOutputs struct {
	s        store.ToolOutputs
	threadID string
}

func (o toolOutputs) Put(ctx context.Context, id, tool string, text []byte) error {
	return o.s.PutToolOutput(ctx, o.threadID, id, tool, text)
}

func (o toolOutputs) Read(ctx context.Context, id string, offset, limit int64) (capabilities.ToolOutputPage, bool, error) {
	out, err := o.s.ReadToolOutput(ctx, o.threadID, id, offset, limit)
	if errors.Is(err, store.ErrNotFound) {
		return capabilities.ToolOutputPage{}, false, nil
	}
	if err != nil {
		return capabilities.ToolOutputPage{}, false, err
	}
	return capabilities.ToolOutputPage{Tool: out.Tool, Data: out.Data, Total: out.Total}, true, nil
}

// ToolOutputs returns the tool outputs stored with thread threadID
// (capabilities.ToolOutputHost).
func (m *Manager) ToolOutputs(threadID string) capabilities.ToolOutputStore {
	return toolOutputs{m.outputs, threadID}
}
