package contextwindow

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Field is the state field that holds the summary of the turns compaction
// replaced.
const Field = "compaction"

const fieldSchema = `{"type":"object","properties":{` +
	`"summary":{"type":"string","description":"the summary the model sees in place of the first messages"},` +
	`"messages":{"type":"integer","description":"how many of the thread's first messages the summary replaces"},` +
	`"count":{"type":"integer","description":"how many times the thread was compacted"},` +
	`"covers":{"type":"string","description":"a digest of the messages the summary replaces, to tell when they were rewritten"},` +
	`"requested":{"type":"boolean","description":"the model asked for a compaction before its next turn"}}}`

// Compaction is the value of the compaction state field.
type Compaction struct {
	// Summary is what the model sees in place of the thread's first
	// Messages messages.
	Summary  string `json:"summary"`
	Messages int    `json:"messages"`
	// Count is how many times the thread was compacted.
	Count int `json:"count"`
	// Covers is a digest of the first Messages messages as they were
	// summarized. When the thread's first messages no longer match it (a
	// client removed or rewrote one), the summary no longer stands for
	// them and is dropped. A compaction saved without it is trusted.
	Covers string `json:"covers,omitempty"`
	// Requested says the model asked, with compactConversation, for a
	// compaction before its next turn.
	Requested bool `json:"requested,omitempty"`
}

// Compacted is the data of a context_compacted event.
type Compacted struct {
	BeforeTokens       int `json:"before_tokens"`
	AfterTokens        int `json:"after_tokens"`
	SummarizedMessages int `json:"summarized_messages"`
}

// summaryPrefix starts the message that stands for the summarized turns.
const summaryPrefix = "[Summary of the earlier conversation, which was condensed to stay within the context budget. The task list and other state are shown apart and are current.]\n\n"

// summarySystem is the summary model's instruction; %d is a word budget.
const summarySystem = `You condense the earlier part of a conversation between a user and an AI agent, so that the agent can go on with its work without those messages.
Keep what the agent needs later: the user's requests, constraints and preferences; decisions made and why; facts found with tools (names, numbers, ids, file paths, URLs); what was done, what failed, and what is still open.
Leave out greetings, repetition and the text of tool outputs beyond their findings. The agent's task list and other state are kept apart and are current, so do not copy them.
If a summary of an even earlier part is given, merge it in, so that yours replaces it.
Answer with the summary alone, in plain prose or short bullet points, in at most %d words.`

// compactor is compaction with a route's settings.
type compactor struct{ settings Settings }

// reserve is the token allowance of a summary within the budget.
func (c compactor) reserve() int {
	return min(max(c.settings.MaxInputTokens/8, 200), 1500)
}

// beforeModel sends the summary in place of the turns it covers and, when
// the request would exceed the budget (or the model asked), summarizes
// more of the older turns first (capabilities.Hooks.BeforeModel).
func (c compactor) beforeModel(ctx context.Context, turn capabilities.ModelTurn) (capabilities.ModelView, error) {
	st, err := readCompaction(turn.State)
	if err != nil {
		return capabilities.ModelView{}, err
	}
	msgs := turn.Messages
	// The thread was rewound before the summary, or the messages it
	// stands for were removed or rewritten (a client's state update): the
	// summary would stand in for messages the thread no longer has, or
	// cut a tool call from its result, so it is dropped, and what is now
	// over the budget is summarized afresh.
	stale := st.Messages > len(msgs) || (st.Covers != "" && digest(msgs[:st.Messages]) != st.Covers)
	if stale {
		st = Compaction{Count: st.Count, Requested: st.Requested}
	}
	view := withSummary(st, msgs)
	before := turn.Tokens(view)
	over := c.settings.MaxInputTokens > 0 && before > c.settings.MaxInputTokens
	if !over && !st.Requested {
		return capabilities.ModelView{Messages: view, Effect: save(st, stale)}, nil
	}
	cut := c.boundary(turn, st, msgs)
	if cut <= st.Messages {
		// Nothing older than the turns kept: the request goes as it is,
		// and a request is taken back.
		requested := st.Requested
		st.Requested = false
		return capabilities.ModelView{Messages: view, Effect: save(st, stale || requested)}, nil
	}
	summary, err := c.summarize(ctx, turn, st.Summary, msgs[st.Messages:cut])
	if err != nil {
		return capabilities.ModelView{}, err
	}
	next := Compaction{Summary: summary, Messages: cut, Count: st.Count + 1, Covers: digest(msgs[:cut])}
	view = withSummary(next, msgs)
	raw, err := json.Marshal(next)
	if err != nil {
		return capabilities.ModelView{}, err
	}
	ev := stream.New(stream.TypeContextCompacted, Compacted{BeforeTokens: before, AfterTokens: turn.Tokens(view), SummarizedMessages: cut - st.Messages})
	return capabilities.ModelView{Messages: view, Effect: capabilities.Effect{Update: thread.State{Field: raw}, Events: []stream.Event{ev}}}, nil
}

// save is the effect that saves st when changed says it changed.
func save(st Compaction, changed bool) capabilities.Effect {
	if !changed {
		return capabilities.Effect{}
	}
	raw, _ := json.Marshal(st) // plain fields always encode
	return capabilities.Effect{Update: thread.State{Field: raw}}
}

// digest is a short hash of msgs' own fields: what Compaction.Covers
// compares. It leaves out their metadata, which capabilities and wires
// may add to later, and tool calls' inputs, which a store may keep as
// JSON re-encoded (Postgres's jsonb orders keys); a call's id names it.
func digest(msgs []thread.Message) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	for _, m := range msgs {
		field(m.Role)
		field(m.Content)
		field(m.ToolCallID)
		field(m.Name)
		field(strconv.FormatBool(m.IsError))
		field(strconv.Itoa(len(m.ToolCalls)))
		for _, tc := range m.ToolCalls {
			field(tc.ID)
			field(tc.Name)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// readCompaction reads the compaction field of s; a thread without one
// has an empty Compaction.
func readCompaction(s thread.State) (Compaction, error) {
	var st Compaction
	if _, err := s.Decode(Field, &st); err != nil {
		return st, fmt.Errorf("the %s state value cannot be read: %w", Field, err)
	}
	st.Messages = max(st.Messages, 0)
	return st, nil
}

// withSummary is msgs as the model sees them with st: the summary, then
// the messages it does not cover.
func withSummary(st Compaction, msgs []thread.Message) []thread.Message {
	if st.Messages == 0 || st.Summary == "" {
		return msgs
	}
	out := make([]thread.Message, 0, len(msgs)-st.Messages+1)
	out = append(out, thread.Message{Role: thread.RoleUser, Content: summaryPrefix + st.Summary})
	return append(out, msgs[st.Messages:]...)
}

// turnStarts are the indexes of msgs where a turn begins: each user
// message and each assistant message. A tool message belongs to the turn
// of the call it answers, so a cut at a turn start never parts a call
// from its result.
func turnStarts(msgs []thread.Message, from int) []int {
	var starts []int
	for i := max(from, 1); i < len(msgs); i++ {
		if r := msgs[i].Role; r == thread.RoleUser || r == thread.RoleAssistant {
			starts = append(starts, i)
		}
	}
	return starts
}

// boundary is where the kept turns begin: the keep_recent_turns latest
// turns, or fewer when those alone, with a summary, exceed the budget
// (down to the latest turn). At or before st.Messages, there is nothing
// to summarize.
func (c compactor) boundary(turn capabilities.ModelTurn, st Compaction, msgs []thread.Message) int {
	starts := turnStarts(msgs, st.Messages+1)
	if len(starts) == 0 {
		return st.Messages
	}
	budget := c.settings.MaxInputTokens - c.reserve()
	for keep := min(c.settings.KeepRecentTurns, len(starts)); keep > 1; keep-- {
		cut := starts[len(starts)-keep]
		if c.settings.MaxInputTokens == 0 || turn.Tokens(withSummary(Compaction{Summary: " ", Messages: cut}, msgs)) <= budget {
			return cut
		}
	}
	return starts[len(starts)-1]
}

// summarize returns a summary of earlier (the summary so far) and msgs,
// written by the summary model. A long stretch is summarized a part at a
// time, each part's summary carried into the next, so that no request to
// the summary model exceeds the budget.
func (c compactor) summarize(ctx context.Context, turn capabilities.ModelTurn, earlier string, msgs []thread.Message) (string, error) {
	if turn.Complete == nil {
		return "", fmt.Errorf("context compaction needs a model, which this run cannot reach")
	}
	words := c.reserve() * 3 / 4
	system := fmt.Sprintf(summarySystem, words)
	summary := earlier
	for _, part := range c.parts(msgs, system) {
		var b strings.Builder
		if summary != "" {
			b.WriteString("Summary of the even earlier conversation:\n" + summary + "\n\n")
		}
		b.WriteString("Conversation to condense:\n" + part)
		text, err := turn.Complete(ctx, c.settings.SummaryModel, system, []thread.Message{{Role: thread.RoleUser, Content: b.String()}})
		if err != nil {
			return "", fmt.Errorf("context compaction: the summary model failed (set context.summary_model to another model, or raise context.max_input_tokens): %w", err)
		}
		if text = strings.TrimSpace(text); text != "" {
			summary = text
		}
	}
	if summary == "" {
		summary = "(nothing of note)"
	}
	return summary, nil
}

// parts are the transcript of msgs cut into pieces that each fit one
// summary request: the budget less the instruction and a summary so far,
// at three bytes a token (fewer than any tokenizer gives English, or most
// other text).
func (c compactor) parts(msgs []thread.Message, system string) []string {
	size := c.settings.MaxInputTokens
	if size == 0 {
		size = DefaultMaxInputTokens
	}
	limit := max((size-2*c.reserve()-100)*3-len(system), 1024)
	var parts []string
	var b strings.Builder
	for _, m := range msgs {
		line := transcriptLine(m, limit)
		if b.Len() > 0 && b.Len()+len(line) > limit {
			parts = append(parts, b.String())
			b.Reset()
		}
		b.WriteString(line)
	}
	if b.Len() > 0 {
		parts = append(parts, b.String())
	}
	return parts
}

// transcriptLine is m as one entry of a transcript, at most limit bytes.
func transcriptLine(m thread.Message, limit int) string {
	var b strings.Builder
	switch m.Role {
	case thread.RoleTool:
		fmt.Fprintf(&b, "[result of %s]: %s", m.Name, m.Content)
	case thread.RoleAssistant:
		b.WriteString("assistant: " + m.Content)
		for _, call := range m.ToolCalls {
			fmt.Fprintf(&b, " [calls %s %s]", call.Name, call.Input)
		}
	default:
		b.WriteString(m.Role + ": " + m.Content)
	}
	line := b.String()
	if len(line) > limit-1 {
		line = cutUTF8(line, limit-40) + " [… cut for the summary]"
	}
	return line + "\n"
}
