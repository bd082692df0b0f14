package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/markers"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitProblem = 1 // a problem in the app: a conflict, a broken route, a failed run
	ExitUsage   = 2 // bad flags or arguments
)

// Config is what the binary brings to the CLI.
type Config struct {
	// Tools are the app's Go tools (from dawn.Main).
	Tools []capabilities.AppTool
	// ToolsKnown says Tools is the app's whole set.
	ToolsKnown bool
	// Markers are the capability markers, in the order they run: the
	// module's registry (markers.All()) and the app's own (dawn.Main's
	// WithCapability). Nil means the registry's.
	Markers []capabilities.Marker
	// Stock marks the plain dawn binary, which has no app tools: for an app
	// with its own main package, dev runs that package instead.
	Stock bool
	// Stdout and Stderr default to the process's.
	Stdout, Stderr io.Writer
	// Env defaults to os.Getenv.
	Env func(string) string
	// args is the command line Run was given, which the stock binary hands
	// on to an app's own binary.
	args []string
	// Prompt, when set, is where dawn run reads a person's answers to the
	// interrupts of a parked run, as if typed at a terminal. Nil asks at
	// stdin when that is a terminal, and nowhere otherwise.
	Prompt io.Reader
	// Auth is the app's own authenticator (dawn.WithAuth); nil uses
	// dawn.yaml's auth: section and DAWN_API_KEY.
	Auth auth.Func
}

// prompt is where dawn run asks a person: Prompt, or stdin when that is a
// terminal, or nil.
func (c *Config) prompt() io.Reader {
	if c.Prompt != nil {
		return c.Prompt
	}
	if isTerminal(os.Stdin) {
		return os.Stdin
	}
	return nil
}

// problemError marks failures that are the app's fault (exit 1).
type problemError struct{ err error }

func (e problemError) Error() string { return e.err.Error() }
func (e problemError) Unwrap() error { return e.err }

// appProblem wraps err so Run exits with ExitProblem.
func appProblem(err error) error {
	if err == nil {
		return nil
	}
	return problemError{err}
}

// Run runs the CLI with args (without the program name) and returns the exit
// code.
func Run(args []string, cfg Config) int {
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.Env == nil {
		cfg.Env = os.Getenv
	}
	cfg.args = args
	if cfg.Markers == nil {
		cfg.Markers = markers.All()
	}
	root := newRoot(&cfg)
	root.SetArgs(args)
	root.SetOut(cfg.Stdout)
	root.SetErr(cfg.Stderr)
	err := root.Execute()
	stopToolSources(cfg.Markers)
	if err == nil {
		return ExitOK
	}
	var child childExit
	if errors.As(err, &child) {
		return child.code
	}
	var ce exitCodeError
	if errors.As(err, &ce) {
		fmt.Fprintln(cfg.Stderr, "dawn:", err)
		return ce.ExitCode()
	}
	var pe problemError
	if errors.As(err, &pe) {
		fmt.Fprintln(cfg.Stderr, "dawn:", err)
		return ExitProblem
	}
	fmt.Fprintln(cfg.Stderr, "dawn:", err)
	fmt.Fprintln(cfg.Stderr, "Run 'dawn --help' for usage.")
	return ExitUsage
}

func newRoot(cfg *Config) *cobra.Command {
	root := &cobra.Command{
		Use:   "dawn",
		Short: "Dawn for Go: file-convention routes for LLM agents",
		Long: `Dawn for Go serves an app folder of agent routes. Every folder with an
agent.md is a route; a plan.md beside it gives the agent a live todo list.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	loading := []*cobra.Command{newStartCmd(cfg), newRoutesCmd(cfg), newCheckCmd(cfg), newTypegenCmd(cfg), newRunCmd(cfg), newChatCmd(cfg), newEvalCmd(cfg)}
	for _, c := range loading {
		handOnToApp(cfg, c)
	}
	root.AddCommand(newDevCmd(cfg), newNewCmd(cfg), newBuildCmd(cfg), newApprovalsCmd(cfg), newUsersCmd(cfg), newMemoryCmd(cfg))
	root.AddCommand(loading...)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	return root
}

// appFlag adds the shared --app flag.
func appFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "app", "./app", "the app folder that holds your routes")
}

// stopToolSources stops what the tool sources among ms started, such as
// MCP server processes, before the CLI exits.
func stopToolSources(ms []capabilities.Marker) {
	for _, m := range ms {
		if ts, ok := m.(capabilities.ToolSource); ok {
			ts.Stop()
		}
	}
}
