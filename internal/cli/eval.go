package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/eval"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/spf13/cobra"
	"github.com/tmc/langchaingo/llms"
)

// Files dawn eval writes into --out.
const (
	evalJSONFile  = "eval.json"
	evalJUnitFile = "junit.xml"
)

// evalFlags are the flags of dawn eval.
type evalFlags struct {
	dir, route, model, out string
	repeat, concurrency    int
	minPass                float64
	// record and replay are --record and --replay.
	record, replay bool
}

func newEvalCmd(cfg *Config) *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Run the eval cases in each route's evals/ folder and report pass rates",
		Long: `eval runs the cases in the evals/*.yaml files beside the app's routes,
each --repeat times (at most --concurrency at once), in-process on a
throwaway store, with each route's model or --model. It checks every
expectation of each run, shows progress on stderr, prints a table of pass
rates per case and expectation, and with --out writes eval.json and
junit.xml there.

--record runs each case once and keeps its model calls in a cassette
beside its eval file (basics.yaml: basics.cassette.json); --replay answers
every model call from there, with no model and no network, and fails a
case whose run asks the model something the recording does not hold,
naming the call and the message that differ.

It exits 1 when a case passes less often than --min-pass (default 1: every
run), naming the case and the expectations that failed, and when an eval
file is broken; 130 after Ctrl-C, which cancels the runs in flight.

Example:
  dawn eval --app examples/app
  dawn eval --app examples/app --route /support/[tenant] --repeat 5 --min-pass 0.8 --out eval-out
  dawn eval --app app --record && dawn eval --app app --replay`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case f.repeat < 1:
				return fmt.Errorf("--repeat is %d; it must be 1 or more", f.repeat)
			case f.concurrency < 1:
				return fmt.Errorf("--concurrency is %d; it must be 1 or more", f.concurrency)
			case f.minPass < 0 || f.minPass > 1:
				return fmt.Errorf("--min-pass is %v; it must be from 0 to 1", f.minPass)
			case f.record && f.repeat > 1:
				return fmt.Errorf("--record runs each case once; leave out --repeat %d (a replay may repeat)", f.repeat)
			}
			return runEval(cmd.Context(), cfg, f)
		},
	}
	appFlag(cmd, &f.dir)
	cmd.Flags().StringVar(&f.route, "route", "", "run only this route's cases (a route id or a path it matches)")
	cmd.Flags().IntVar(&f.repeat, "repeat", 1, "run each case this many times")
	cmd.Flags().StringVar(&f.model, "model", "", "run every route on this model (provider:model) instead of its own")
	cmd.Flags().IntVar(&f.concurrency, "concurrency", 4, "the most runs at once")
	cmd.Flags().StringVar(&f.out, "out", "", "write eval.json and junit.xml into this folder")
	cmd.Flags().Float64Var(&f.minPass, "min-pass", 1, "the pass rate (0 to 1) every case must reach")
	cmd.Flags().BoolVar(&f.record, "record", false, "record each case's model calls into a cassette beside its eval file (NAME.cassette.json)")
	cmd.Flags().BoolVar(&f.replay, "replay", false, "answer every model call from the cassettes --record wrote, with no model and no network")
	cmd.MarkFlagsMutuallyExclusive("record", "replay")
	return cmd
}

func runEval(ctx context.Context, cfg *Config, f evalFlags) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, loadErr := loadApp(ctx, cfg, f.dir)
	if a == nil || a.Tree == nil || errors.As(loadErr, new(*app.SettingsError)) {
		return appProblem(loadErr)
	}
	cases, err := evalCases(cfg, a, f)
	if err != nil {
		return err
	}
	judge, err := judgeModel(cfg, a, cases)
	if err != nil {
		return err
	}
	st, err := store.Open(":memory:")
	if err != nil {
		return appProblem(fmt.Errorf("opening the eval store: %w", err))
	}
	defer st.Close()
	opts := runner.Options{Env: cfg.Env, Models: appModels(a.Dir, cfg.Env), Logger: slog.New(slog.NewTextHandler(cfg.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
	tapes, err := evalTapes(cfg, cases, f)
	if err != nil {
		return err
	}
	if tapes != nil {
		opts.Models = tapes.Models(opts.Models)
	}
	if f.model != "" {
		// A script named on the command line is read from the working
		// directory; the case's own model: wins.
		spec := models.ScriptInDir(f.model, workingDir())
		if _, err := models.New(spec, cfg.Env); err != nil && !f.replay {
			return fmt.Errorf("--model %s: %w", f.model, err)
		}
		for i := range cases {
			if cases[i].Model == "" {
				cases[i].Model = spec
			}
		}
		fmt.Fprintf(cfg.Stderr, "model: %s for every case without a model: of its own (--model)\n", f.model)
	}
	runs := runner.New(st, a, opts)
	defer runs.Shutdown(context.Background())
	fmt.Fprintf(cfg.Stderr, "eval: %d case(s) × %d run(s), %d at once\n", len(cases), f.repeat, f.concurrency)
	report := eval.Run(ctx, runs, cases, eval.Options{
		Repeat: f.repeat, Concurrency: f.concurrency, Judge: judge, Tapes: tapes,
		Progress: func(done, total int, at eval.Attempt) { showAttempt(cfg.Stderr, done, total, at) },
	})
	if f.record && ctx.Err() == nil {
		paths, err := tapes.Save()
		if err != nil {
			return appProblem(fmt.Errorf("writing the recording: %w", err))
		}
		for _, p := range paths {
			fmt.Fprintln(cfg.Stderr, "recorded", p)
		}
	}
	if err := report.WriteTable(cfg.Stdout); err != nil {
		return err
	}
	if f.out != "" {
		if err := writeEvalOut(f.out, report); err != nil {
			return appProblem(err)
		}
		fmt.Fprintf(cfg.Stderr, "wrote %s and %s\n", filepath.Join(f.out, evalJSONFile), filepath.Join(f.out, evalJUnitFile))
	}
	if ctx.Err() != nil {
		return exitCodeError{code: ExitInterrupted, msg: "eval interrupted: the runs in flight were cancelled, and the report covers what ran"}
	}
	if below := report.Below(f.minPass); len(below) > 0 {
		for _, line := range below {
			fmt.Fprintln(cfg.Stderr, "FAIL", line)
		}
		return appProblem(fmt.Errorf("eval: %d expectation(s) of case(s) below --min-pass %g", len(below), f.minPass))
	}
	return nil
}

// evalTapes are the tapes of --record or --replay, or nil. A replay reads
// every cassette first: one missing is an error naming it.
func evalTapes(cfg *Config, cases []eval.Case, f evalFlags) (*eval.Tapes, error) {
	switch {
	case f.record:
		fmt.Fprintln(cfg.Stderr, "recording each case's model calls (--record)")
		return eval.NewRecorder(), nil
	case f.replay:
		tapes, err := eval.LoadReplay(cases)
		if err != nil {
			for _, p := range splitJoined(err) {
				fmt.Fprintln(cfg.Stderr, "error:", p)
			}
			return nil, appProblem(errors.New("--replay: a recording is missing or broken; record it with dawn eval --record"))
		}
		fmt.Fprintln(cfg.Stderr, "replaying each case's recorded model calls, no model is called (--replay)")
		return tapes, nil
	}
	return nil, nil
}

// workingDir is the working directory, or "" when it cannot be read.
func workingDir() string {
	dir, _ := os.Getwd()
	return dir
}

// evalCases reads the app's eval files and keeps --route's cases; broken
// files are problems, each printed.
func evalCases(cfg *Config, a *app.App, f evalFlags) ([]eval.Case, error) {
	cases, err := eval.Collect(f.dir, a.Tree)
	if err != nil {
		problems := splitJoined(err)
		for _, p := range problems {
			fmt.Fprintln(cfg.Stderr, "error:", p)
		}
		return nil, appProblem(fmt.Errorf("%d problem(s) in the eval files of %s; fix them (dawn check lists them too)", len(problems), f.dir))
	}
	cases, err = eval.Select(a.Tree, cases, f.route)
	if err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		where := f.dir
		if f.route != "" {
			where = "route " + f.route
		}
		return nil, appProblem(fmt.Errorf("no eval cases in %s: add a YAML file of cases in an evals/ folder beside a route's agent.md", where))
	}
	return cases, nil
}

// judgeModel is the model that scores judge criteria: eval.judge_model in
// dawn.yaml, built only when a case has judge criteria. Nil when there is
// none: those cases fail, saying how to set one.
func judgeModel(cfg *Config, a *app.App, cases []eval.Case) (llms.Model, error) {
	spec := a.Config.Eval.JudgeModel
	if spec == "" || !slices.ContainsFunc(cases, func(c eval.Case) bool { return c.Expect.Judge != nil }) {
		return nil, nil
	}
	m, err := models.New(spec, cfg.Env)
	if err != nil {
		return nil, appProblem(fmt.Errorf("eval.judge_model in dawn.yaml (%s): %w", spec, err))
	}
	return m, nil
}

// showAttempt prints one finished attempt as a progress line.
func showAttempt(w io.Writer, done, total int, at eval.Attempt) {
	verdict := "pass"
	if !at.Pass() {
		var failed []string
		for _, r := range at.Results {
			if !r.Pass {
				failed = append(failed, r.Expectation)
			}
		}
		verdict = "FAIL " + strings.Join(failed, ", ")
	}
	fmt.Fprintf(w, "[%d/%d] %s %s #%d: %s (%s)\n", done, total, at.Case.Route, at.Case.Name, at.N, verdict, at.Duration.Round(1e6))
}

// writeEvalOut writes the report as JSON and JUnit XML into dir.
func writeEvalOut(dir string, r *eval.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	for name, write := range map[string]func(io.Writer) error{evalJSONFile: r.WriteJSON, evalJUnitFile: r.WriteJUnit} {
		if err := writeFileWith(filepath.Join(dir, name), write); err != nil {
			return err
		}
	}
	return nil
}

func writeFileWith(path string, write func(io.Writer) error) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(file); err != nil {
		file.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return file.Close()
}
