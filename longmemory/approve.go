package longmemory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// Kind is the kind of the interrupts the capability raises.
const Kind = "memory"

// Decisions a resume payload may carry, as a JSON string or as
// {"decision": …}.
const (
	Approve = "approve"
	Reject  = "reject"
)

// Detail is the detail of a "memory" interrupt.
type Detail struct {
	// Key is the key of the memory the call would write.
	Key string `json:"key"`
	// OldText is the memory kept under Key now ("" for none: a new
	// memory under writes: ask).
	OldText string `json:"oldText"`
	// NewText is what the call would keep in its place.
	NewText string `json:"newText"`
}

// gate holds back remember calls: every one under writes: ask, and
// those that would replace a memory of its namespace under
// approve_replace.
type gate struct {
	ns           []string
	ask, replace bool
}

// beforeTool parks a remember whose key already holds a memory with other
// text (or, under writes: ask, any remember). A remember of the text
// already kept runs.
func (g gate) beforeTool(ctx context.Context, _ thread.State, call thread.ToolCall, _ thread.State) capabilities.Effect {
	if call.Name != "remember" {
		return capabilities.Effect{}
	}
	var in rememberIn
	if json.Unmarshal(call.Input, &in) != nil {
		return capabilities.Effect{} // the tool refuses its input itself
	}
	key, text, err := in.parse()
	st := items(ctx)
	if err != nil || st == nil {
		return capabilities.Effect{} // the tool says what is wrong
	}
	old, found, err := st.Get(ctx, g.ns, key)
	if err != nil {
		return capabilities.Effect{Refuse: true, Refusal: fmt.Sprintf("could not check whether memory %q exists (%v); try again later", key, err)}
	}
	if !found && !g.ask {
		return capabilities.Effect{}
	}
	m := Record{}
	if found {
		m = decodeRecord(old.Value)
	}
	if found && m.Text == text {
		return capabilities.Effect{}
	}
	detail, _ := json.Marshal(Detail{Key: key, OldText: m.Text, NewText: text})
	return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "memory-" + uuid.NewString(), Kind: Kind, Detail: detail}}
}

const decisions = `"approve" or "reject" (or {"decision": "approve"}, or {"decision": "edit", "text": "…"})`

// Edit is the decision that approves a write with a person's text.
const Edit = "edit"

// resolve answers a "memory" interrupt: approve lets the write go on,
// edit lets it go on with the person's text, reject (or a cancel) writes
// nothing and tells the model.
func (g gate) resolve(_ thread.State, in capabilities.Interrupt, _ thread.ToolCall, a capabilities.Answer) (capabilities.Resolution, bool, error) {
	if in.Kind != Kind {
		return capabilities.Resolution{}, false, nil
	}
	var d Detail
	_ = json.Unmarshal(in.Detail, &d)
	rejected := capabilities.Resolution{Refusal: fmt.Sprintf("a person refused replacing memory %q; it keeps its old text. Do not replace it again for this request; go on without it or tell the user", d.Key)}
	if d.OldText == "" {
		rejected.Refusal = fmt.Sprintf("a person refused remembering %q. Do not remember it again for this request; go on without it or tell the user", d.NewText)
	}
	if a.Status == capabilities.AnswerCancelled {
		return rejected, true, nil
	}
	var edit struct {
		Decision, Text string
	}
	if json.Unmarshal(a.Payload, &edit) == nil && edit.Decision == Edit {
		text := strings.TrimSpace(edit.Text)
		if text == "" || len(text) > maxText {
			return capabilities.Resolution{}, true, fmt.Errorf("an edit of memory %q needs its new text, at most %d bytes: {\"decision\": \"edit\", \"text\": \"…\"}", d.Key, maxText)
		}
		input, _ := json.Marshal(rememberIn{Text: text, Key: d.Key})
		return capabilities.Resolution{Run: true, Input: input}, true, nil
	}
	word, err := capabilities.DecisionWord(a.Payload, decisions)
	if err != nil {
		return capabilities.Resolution{}, true, err
	}
	switch word {
	case Approve:
		return capabilities.Resolution{Run: true}, true, nil
	case Reject:
		return rejected, true, nil
	}
	return capabilities.Resolution{}, true, fmt.Errorf("payload %q is not a decision on a memory interrupt; send %s", word, decisions)
}
