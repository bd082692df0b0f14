package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

// Verifier kinds: how a check line of plan.md is run.
const (
	// CheckCommand runs the line as a shell command through the route's
	// BashTool and passes on exit code 0.
	CheckCommand = "command"
	// CheckTool calls a registered tool (Go or MCP) and passes when it
	// returns without error.
	CheckTool = "tool"
	// CheckVerifier calls a Go verifier the app registered by name.
	CheckVerifier = "verifier"
)

// BashTool is the sandbox tool a command verifier runs through: input
// {"command","timeout_ms"}, result {exit_code, stdout, stderr, truncated,
// duration_ms}.
const BashTool = "runBash"

// DefaultVerifyTimeout bounds one verifier run when plan.md's
// verify_timeout does not.
const DefaultVerifyTimeout = time.Minute

// MaxVerifyOutput bounds the excerpt of a verifier's output kept as
// evidence and shown to the model, in bytes; the end of the output is
// kept, where a failure's cause usually is.
const MaxVerifyOutput = 2048

// VerifyPrefix starts a verifier line: a nested bullet "- verify: …" under
// a plan.md checklist item.
const VerifyPrefix = "verify:"

// Check is one parsed verifier line.
type Check struct {
	Kind string
	// Name is the tool or verifier name; empty for a command.
	Name string
	// Args is a tool's JSON input ({} when the line gives none).
	Args json.RawMessage
	// Command is a command verifier's shell text.
	Command string
}

// ParseCheck reads the text after "verify:": "tool NAME {json}" calls a
// tool; a single word that named reports as a registered verifier calls
// it; anything else is a shell command. An error names what is wrong.
func ParseCheck(line string, named func(string) bool) (Check, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return Check{}, errors.New("verify: needs a command, \"tool NAME {json}\" or a verifier name")
	}
	if rest, ok := strings.CutPrefix(line, "tool "); ok {
		rest = strings.TrimSpace(rest)
		name, args, _ := strings.Cut(rest, " ")
		args = strings.TrimSpace(args)
		if args == "" {
			args = "{}"
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
			return Check{}, fmt.Errorf("verify: tool %s: the input must be one JSON object, such as {\"id\":\"42\"}, not %q", name, args)
		}
		return Check{Kind: CheckTool, Name: name, Args: json.RawMessage(args)}, nil
	}
	if !strings.ContainsAny(line, " \t") && named != nil && named(line) {
		return Check{Kind: CheckVerifier, Name: line}, nil
	}
	return Check{Kind: CheckCommand, Command: line}, nil
}

// Label names the check for evidence and the model: "command: go test
// ./...", "tool: lookupOrder", "verifier: notesWritten".
func (c Check) Label() string {
	if c.Kind == CheckCommand {
		return CheckCommand + ": " + c.Command
	}
	return c.Kind + ": " + c.Name
}

// VerifyInput is what a Go verifier is given: the route, the item it
// checks, the model's own words for it, and the thread's state.
type VerifyInput struct {
	RouteID string
	Params  map[string]string
	// Item is the plan item's (or postcondition's) text.
	Item string
	// Claim is the evidence the model gave, if any.
	Claim string
	// State is the thread's state when the model made the claim. Do not
	// modify it.
	State thread.State
}

// Verdict is a Go verifier's answer: Pass, and Detail, a line saying what
// it found (shown to the model on a failure and kept as evidence).
type Verdict struct {
	Pass   bool
	Detail string
}

// VerifierFunc is a Go verifier an app registers by name.
type VerifierFunc func(ctx context.Context, in VerifyInput) (Verdict, error)

// Verification is the outcome of one verifier run, kept on the item or
// postcondition it checked.
type Verification struct {
	// VerifiedBy is the check's Label.
	VerifiedBy string `json:"verified_by"`
	Passed     bool   `json:"passed"`
	// ExitCode is a command's exit code.
	ExitCode *int `json:"exit_code,omitempty"`
	// Result is a tool's JSON result, when it is at most MaxVerifyOutput
	// bytes.
	Result json.RawMessage `json:"result,omitempty"`
	// Output is an excerpt of what the check printed or said, at most
	// MaxVerifyOutput bytes.
	Output string    `json:"output,omitempty"`
	At     time.Time `json:"at"`
	// Claim is the model's own evidence for the step, kept beside the
	// harness's.
	Claim string `json:"claim,omitempty"`
}

// Summary is the verification in one line, for evidence and the model.
func (v *Verification) Summary() string {
	var b strings.Builder
	if v.Passed {
		b.WriteString("verified by ")
	} else {
		b.WriteString("failed verification by ")
	}
	b.WriteString(v.VerifiedBy)
	if v.ExitCode != nil {
		fmt.Fprintf(&b, " (exit %d)", *v.ExitCode)
	}
	return b.String()
}

// Checker runs verifiers: tools through Tools, Go verifiers from
// Verifiers, each under Timeout.
type Checker struct {
	Tools     capabilities.ToolCaller
	Verifiers map[string]VerifierFunc
	Timeout   time.Duration
	Now       func() time.Time
}

// Run runs check c for in and returns its verification; it never fails:
// a check that cannot run is a failed verification saying why.
func (k Checker) Run(ctx context.Context, c Check, in VerifyInput) *Verification {
	timeout := k.Timeout
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v := &Verification{VerifiedBy: c.Label(), Claim: strings.TrimSpace(in.Claim)}
	switch c.Kind {
	case CheckVerifier:
		k.runVerifier(ctx, c, in, v)
	case CheckTool:
		k.runTool(ctx, c, v)
	default:
		k.runCommand(ctx, c, timeout, v)
	}
	if ctx.Err() != nil && !v.Passed {
		v.Output = excerpt(fmt.Sprintf("the verifier did not finish within %s (verify_timeout in plan.md). %s", timeout, v.Output))
	}
	now := time.Now
	if k.Now != nil {
		now = k.Now
	}
	v.At = now().UTC()
	return v
}

func (k Checker) runVerifier(ctx context.Context, c Check, in VerifyInput, v *Verification) {
	fn := k.Verifiers[c.Name]
	if fn == nil {
		v.Output = fmt.Sprintf("no verifier named %q is registered (dawn.Verifier in the app's main)", c.Name)
		return
	}
	verdict, err := safeVerify(ctx, fn, in)
	if err != nil {
		v.Output = excerpt("the verifier failed: " + err.Error())
		return
	}
	v.Passed, v.Output = verdict.Pass, excerpt(verdict.Detail)
}

func safeVerify(ctx context.Context, fn VerifierFunc, in VerifyInput) (verdict Verdict, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panicked: %v", r)
		}
	}()
	return fn(ctx, in)
}

func (k Checker) runTool(ctx context.Context, c Check, v *Verification) {
	if k.Tools == nil {
		v.Output = "no run hosts this call, so the tool cannot be called"
		return
	}
	res, err := k.Tools.CallTool(ctx, c.Name, c.Args)
	if err != nil {
		v.Output = excerpt(err.Error())
		return
	}
	v.Passed = true
	if len(res.Output) <= MaxVerifyOutput && json.Valid(res.Output) {
		v.Result = res.Output
	} else {
		v.Output = excerpt(string(res.Output))
	}
}

// bashResult is BashTool's result.
type bashResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
}

func (k Checker) runCommand(ctx context.Context, c Check, timeout time.Duration, v *Verification) {
	if k.Tools == nil {
		v.Output = "no run hosts this call, so the command cannot run"
		return
	}
	in, _ := json.Marshal(map[string]any{"command": c.Command, "timeout_ms": timeout.Milliseconds()})
	res, err := k.Tools.CallTool(ctx, BashTool, in)
	if err != nil {
		if errors.Is(err, capabilities.ErrNoTool) {
			err = fmt.Errorf("the route has no %s tool, so the command cannot run; configure a sandbox (workspace: in agent.md, sandbox: in dawn.yaml) or verify with a tool", BashTool)
		}
		v.Output = excerpt(err.Error())
		return
	}
	var out bashResult
	if err := json.Unmarshal(res.Output, &out); err != nil {
		v.Output = excerpt(fmt.Sprintf("%s returned %s, not {exit_code, stdout, stderr}", BashTool, res.Output))
		return
	}
	code := out.ExitCode
	v.ExitCode, v.Passed = &code, code == 0
	text := out.Stdout
	if out.Stderr != "" {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += out.Stderr
	}
	v.Output = excerpt(text)
}

// excerpt keeps the last MaxVerifyOutput bytes of s, on a rune boundary.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= MaxVerifyOutput {
		return s
	}
	cut := len(s) - MaxVerifyOutput + len("…")
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}
