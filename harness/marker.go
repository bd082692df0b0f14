package harness

import (
	"context"
	"encoding/json"
	"maps"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

// Name is the capability's name.
const Name = "harness"

// PlanField is the state field that holds a harness-owned plan.
const PlanField = "plan"

// NotePrefix starts every note the harness writes to the model, so the
// offline model can tell it from the user.
const NotePrefix = "Plan harness:"

// Message keys the harness stores on thread messages (see MessageKeys).
const (
	// MessageHarness marks a message the harness wrote, not the user.
	MessageHarness = "harness"
	// MessagePlan is the plan snapshot linked to a final answer.
	MessagePlan = "plan"
)

// Marker returns the harness capability. Its plan lives in the planning
// capability's plan.md (enforce: true), so it detects nothing itself; it
// brings the harness's parts outside a route: the supervisor's HTTP routes
// under /threads/:id/plan, the message keys it stores, and the offline
// model's knowledge of its notes.
func Marker() capabilities.Marker { return marker{} }

type marker struct{}

func (marker) Name() string { return Name }

// Detect reports false: see Marker.
func (marker) Detect(string) (string, bool) { return "", false }

func (marker) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}

// MessageKeys names the keys the harness stores on thread messages
// (capabilities.MessageMetadata).
func (marker) MessageKeys() []string { return []string{MessageHarness, MessagePlan} }

// OfflineReply reports the harness's notes as its own text, not the user's
// (capabilities.OfflineScript).
func (marker) OfflineReply(text string) (string, bool) {
	return "", strings.HasPrefix(text, NotePrefix)
}

// Mark returns m with the harness's mark: a message the harness wrote, not
// the user or the model.
func Mark(m thread.Message) thread.Message {
	meta := maps.Clone(m.Meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[MessageHarness] = json.RawMessage("true")
	m.Meta = meta
	return m
}

// Marked reports whether the harness wrote m.
func Marked(m thread.Message) bool {
	var marked bool
	_ = json.Unmarshal(m.Meta[MessageHarness], &marked)
	return marked
}

// Snapshot returns the plan snapshot linked to a final answer, or nil.
func Snapshot(m thread.Message) json.RawMessage { return m.Meta[MessagePlan] }
