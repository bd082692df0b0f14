package contextwindow

import (
	"fmt"
	"strings"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Key is the agent.md front matter key, and the dawn.yaml key, of the
// settings.
const Key = "context"

// Defaults of a context section that leaves a key out.
const (
	DefaultMaxInputTokens     = 12000
	DefaultKeepRecentTurns    = 6
	DefaultToolOutputMaxBytes = 8192
)

// Lower bounds of the settings that switch a part on.
const (
	minInputTokens = 1000
	minOutputBytes = 256
)

// example is the settings' shape, for error messages.
const example = "context: {max_input_tokens: 12000, keep_recent_turns: 6, summary_model: \"\", tool_output_max_bytes: 8192, compact_tool: false}"

// Settings are the context settings of a route: dawn.yaml's for the app,
// with the keys agent.md sets in their place.
type Settings struct {
	// MaxInputTokens is the budget of a model request's estimated input
	// tokens; over it, older turns are summarized. 0 switches compaction
	// off.
	MaxInputTokens int `json:"max_input_tokens"`
	// KeepRecentTurns is how many of the latest turns compaction keeps
	// verbatim (fewer when they alone exceed the budget).
	KeepRecentTurns int `json:"keep_recent_turns"`
	// SummaryModel writes the summaries; "" is the route's model.
	SummaryModel string `json:"summary_model,omitempty"`
	// ToolOutputMaxBytes is the largest tool output the model sees whole;
	// a larger one is stored with the thread. 0 switches offload off.
	ToolOutputMaxBytes int `json:"tool_output_max_bytes"`
	// CompactTool gives the model the compactConversation tool.
	CompactTool bool `json:"compact_tool,omitempty"`
}

// Defaults are the settings of context: true.
func Defaults() Settings {
	return Settings{MaxInputTokens: DefaultMaxInputTokens, KeepRecentTurns: DefaultKeepRecentTurns, ToolOutputMaxBytes: DefaultToolOutputMaxBytes}
}

// section is what a context value says: off, or on with settings.
type section struct {
	off bool
	// keys are the keys the mapping sets, applied over a base.
	keys []func(*Settings)
}

// parseSection reads a context value: true, false, null or a mapping of
// the settings. An error names the key and says what to write.
func parseSection(n *yaml.Node) (section, error) {
	n = yamldoc.Resolve(n)
	if yamldoc.IsNull(n) {
		return section{off: true}, nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		var on bool
		if n.ShortTag() == "!!bool" && n.Decode(&on) == nil {
			return section{off: !on}, nil
		}
	case yaml.MappingNode:
		var s section
		for k, v := range yamldoc.Pairs(n) {
			set, err := parseKey(k.Value, yamldoc.Resolve(v))
			if err != nil {
				return s, err
			}
			s.keys = append(s.keys, set)
		}
		return s, nil
	}
	return section{}, fmt.Errorf("%s must be true, false or a mapping, like %s", Key, example)
}

// parseKey reads one key of a context mapping.
func parseKey(key string, v *yaml.Node) (func(*Settings), error) {
	switch key {
	case "max_input_tokens":
		n, err := whole(v, key, minInputTokens, "0 switches compaction off")
		return func(s *Settings) { s.MaxInputTokens = n }, err
	case "keep_recent_turns":
		n, err := whole(v, key, 1, "")
		if err == nil && n == 0 {
			err = fmt.Errorf("%s.%s must be at least 1, like %s", Key, key, example)
		}
		return func(s *Settings) { s.KeepRecentTurns = n }, err
	case "summary_model":
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!str" && v.ShortTag() != "!!null") {
			return nil, fmt.Errorf("%s.summary_model must be a model name like openai:gpt-4o-mini, or \"\" for the route's model", Key)
		}
		name := strings.TrimSpace(v.Value)
		return func(s *Settings) { s.SummaryModel = name }, nil
	case "tool_output_max_bytes":
		n, err := whole(v, key, minOutputBytes, "0 switches offload off")
		return func(s *Settings) { s.ToolOutputMaxBytes = n }, err
	case "compact_tool":
		var b bool
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&b) != nil {
			return nil, fmt.Errorf("%s.compact_tool must be true or false", Key)
		}
		return func(s *Settings) { s.CompactTool = b }, nil
	}
	return nil, fmt.Errorf("%s: unknown key %q; the keys are max_input_tokens, keep_recent_turns, summary_model, tool_output_max_bytes and compact_tool, like %s", Key, key, example)
}

// whole reads a whole number of at least least, or 0 (which off says
// means, when not empty).
func whole(v *yaml.Node, key string, least int, off string) (int, error) {
	var n int
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&n) != nil || n < 0 || (n > 0 && n < least) {
		msg := fmt.Sprintf("%s.%s must be a whole number of at least %d", Key, key, least)
		if off != "" {
			msg += " (" + off + ")"
		}
		return 0, fmt.Errorf("%s, not %q", msg, v.Value)
	}
	return n, nil
}

// over returns base with the section's keys set.
func (s section) over(base Settings) Settings {
	for _, set := range s.keys {
		set(&base)
	}
	return base
}
