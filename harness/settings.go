package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Advance settings.
const (
	AdvanceAuto   = "auto"
	AdvanceManual = "manual"
)

// Defaults for Settings.
const (
	DefaultBudget      = 8
	DefaultRetryCap    = 3
	DefaultMaxItems    = 20
	DefaultCorrections = 3
	// MaxParallel bounds plan-first steps running at once.
	MaxParallel = 16
)

// Settings is a route's plan.md front matter. The harness is on only when
// Enforce is true; a plan.md without front matter behaves as in Dawn.
type Settings struct {
	Goal    string
	Enforce bool
	// Evidence says completing an item needs evidence.
	Evidence bool
	// Approval says the model's first plan waits for a person's approval
	// (approval: required): its first writeTodos, or a plan-first plan
	// before any step runs.
	Approval bool
	Advance  string
	Budget   int
	RetryCap int
	MaxItems int
	// Compact renders the short <plan_state> prompt block instead of the
	// full list.
	Compact bool
	// Corrections is how many premature final answers the gate sends back
	// before the plan fails.
	Corrections int
	// Postconditions are the "Done when" checklist items; PostVerify holds
	// each one's verifier line ("" for none), by index.
	Postconditions []string
	PostVerify     []string
	// VerifyTimeout bounds one verifier run (verify_timeout); zero is
	// DefaultVerifyTimeout.
	VerifyTimeout time.Duration
	// MaxChildren bounds the subagent plans nested under one item
	// (max_children); zero is DefaultMaxChildren.
	MaxChildren int
	// Mode is the plan-first mode ("off", "auto" or "always"); empty leaves
	// it to dawn.yaml. mode: sequential and mode: parallel set it to "off".
	Mode string
	// FanOut is mode: parallel: the harness runs the open items of the
	// model's plan at once on workers (see FanOut).
	FanOut bool
	// Threshold is the complexity score at which auto mode plans first;
	// zero leaves it to dawn.yaml.
	Threshold int
	// Parallel is how many independent plan-first steps may run at once;
	// zero leaves it to dawn.yaml.
	Parallel int
}

// Keys lists the front matter keys ParseSettings accepts.
var Keys = []string{"goal", "enforce", "evidence", "approval", "advance", "budget", "retry_cap", "max_items", "prompt", "corrections", "mode", "threshold", "parallel", "verify_timeout", "max_children"}

// ParseSettings reads plan.md front matter: the YAML between the opening
// "---" line (line 1 of the file) and the closing one. path names the file
// in errors, with file line numbers. Every problem is reported, each naming
// its key and what to write.
func ParseSettings(path, front string) (Settings, []error) {
	s := Settings{Advance: AdvanceAuto, Budget: DefaultBudget, RetryCap: DefaultRetryCap, MaxItems: DefaultMaxItems, Corrections: DefaultCorrections}
	root, err := yamldoc.Mapping([]byte(front))
	var notMapping *yamldoc.NotMappingError
	switch {
	case errors.As(err, &notMapping):
		return s, []error{fmt.Errorf("%s: front matter must be a mapping of keys (%s)", path, strings.Join(Keys, ", "))}
	case err != nil:
		return s, []error{fmt.Errorf("%s: front matter is not valid YAML: %v", path, err)}
	}
	var errs []error
	bad := func(key *yaml.Node, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: front matter key %q: %s", path, key.Line+1, key.Value, fmt.Sprintf(format, args...)))
	}
	var set []string
	for key, val := range yamldoc.Pairs(root) {
		set = append(set, key.Value)
		s.set(key, val, bad)
	}
	if s.FanOut && s.Advance == AdvanceManual {
		errs = append(errs, fmt.Errorf("%s: mode: parallel runs the plan's items at once, so advance: manual (wait for the user after each item) cannot hold; remove one of the two", path))
	}
	if !s.Enforce && len(set) > 0 && !(len(set) == 1 && slices.Contains(set, "enforce")) {
		errs = append(errs, fmt.Errorf("%s: front matter sets %s but not enforce: true; the plan harness is off without it, so add enforce: true or remove the front matter", path, strings.Join(set, ", ")))
	}
	return s, errs
}

// set reads one front matter key's value into s, reporting a bad value or
// an unknown key through bad.
func (s *Settings) set(key, val *yaml.Node, bad func(*yaml.Node, string, ...any)) {
	switch key.Value {
	case "goal":
		s.Goal = strings.TrimSpace(val.Value)
		if val.Kind != yaml.ScalarNode {
			bad(key, "must be one line of text")
		}
	case "enforce":
		if err := val.Decode(&s.Enforce); err != nil {
			bad(key, "must be true or false")
		}
	case "evidence":
		switch val.Value {
		case "required":
			s.Evidence = true
		case "optional":
		default:
			bad(key, "must be required or optional, not %q", val.Value)
		}
	case "approval":
		switch val.Value {
		case "required":
			s.Approval = true
		case "none":
		default:
			bad(key, "must be required or none, not %q", val.Value)
		}
	case "advance":
		if val.Value != AdvanceAuto && val.Value != AdvanceManual {
			bad(key, "must be auto or manual, not %q", val.Value)
		}
		s.Advance = val.Value
	case "budget":
		s.Budget = positive(val, key, bad, 1000)
	case "retry_cap":
		s.RetryCap = positive(val, key, bad, 100)
	case "max_items":
		s.MaxItems = positive(val, key, bad, 200)
	case "corrections":
		s.Corrections = positive(val, key, bad, 100)
	case "mode":
		switch val.Value {
		case "off", "auto", "always":
			s.Mode = val.Value
		case "plan-first":
			s.Mode = "always"
		case ModeSequential, ModeParallel:
			s.Mode, s.FanOut = "off", val.Value == ModeParallel
		default:
			bad(key, "must be sequential or parallel (how the model's own plan runs), or off, auto, always or plan-first (when the harness plans first), not %q", val.Value)
		}
	case "threshold":
		s.Threshold = positive(val, key, bad, 10)
	case "parallel":
		s.Parallel = positive(val, key, bad, MaxParallel)
	case "max_children":
		s.MaxChildren = positive(val, key, bad, 32)
	case "verify_timeout":
		d, err := time.ParseDuration(val.Value)
		if err != nil || d < time.Second || d > time.Hour {
			bad(key, "must be a duration from 1s to 1h, such as 30s or 2m, not %q", val.Value)
		}
		s.VerifyTimeout = d
	case "prompt":
		switch val.Value {
		case "compact":
			s.Compact = true
		case "full":
		default:
			bad(key, "must be full or compact, not %q", val.Value)
		}
	default:
		bad(key, "unknown key; allowed keys are %s", strings.Join(Keys, ", "))
	}
}

func positive(val, key *yaml.Node, bad func(*yaml.Node, string, ...any), limit int) int {
	n, ok := yamldoc.Int(val)
	if !ok || n < 1 || n > limit {
		bad(key, "must be a whole number from 1 to %d", limit)
		return 1
	}
	return n
}
