package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/internal/client"
	"github.com/dawn-go/dawn/internal/planview"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

// ExitInterrupted is the exit code of a run stopped with Ctrl-C (128+SIGINT).
const ExitInterrupted = 130

// exitCodeError ends the CLI with its own exit code.
type exitCodeError struct {
	code int
	msg  string
}

func (e exitCodeError) Error() string { return e.msg }

// ExitCode returns the exit code Run returns for e.
func (e exitCodeError) ExitCode() int { return e.code }

// maxStdinInput is the most bytes of a message read from stdin.
const maxStdinInput = 8 << 20

// runFlags are the flags of dawn run.
type runFlags struct {
	dir, url, input, threadID string
	inputSet                  bool
	asJSON, plain             bool
	// planFirst is the run's plan-first option: off, auto, always, or
	// preview (--plan-preview).
	planFirst string
}

func newRunCmd(cfg *Config) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run ROUTE",
		Short: "Run one route from the terminal and show the live plan",
		Long: `run sends one message to a route and shows the run as it happens: the
plan (○ pending, ▶ in progress, ✓ completed), redrawn in place on a terminal,
the tool calls, and the answer text as it streams. When stdout is not a
terminal, or with --plain, it prints plain lines instead; --json prints every
event as one JSON line for scripts.

The run happens in-process on the app folder (--app), or on a running server
(--url, sending Authorization: Bearer $DAWN_API_KEY when that is set). The
message is --input, or stdin when that is not a terminal. The thread id is
printed at the end; pass it as --thread to continue the conversation.

Exit codes: 0 when the run succeeds, 1 when it fails or is cancelled, 2 for
bad arguments, 130 after Ctrl-C (which cancels the run).

Example:
  dawn run /support/acme --app examples/app --input "Help me with my account"
  echo "Help me with my account" | dawn run /support/acme --app examples/app

On a route whose plan.md has enforce: true, --plan-first always makes the
model plan the steps first (a dependency graph the harness executes), and
--plan-preview prints that plan and its execution order without running it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.inputSet = cmd.Flags().Changed("input")
			if preview, _ := cmd.Flags().GetBool("plan-preview"); preview {
				f.planFirst = "preview"
			}
			return runRoute(cmd, cfg, args[0], f)
		},
	}
	appFlag(cmd, &f.dir)
	cmd.Flags().StringVar(&f.url, "url", "", "run on the server at this URL (http://host:port) instead of in-process")
	cmd.Flags().StringVar(&f.input, "input", "", "the message to send (default: read stdin when it is not a terminal)")
	cmd.Flags().StringVar(&f.threadID, "thread", "", "continue this thread (default: a new one)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, `print each event as a JSON line {"id","event","data"}`)
	cmd.Flags().BoolVar(&f.plain, "plain", false, "print plain lines even on a terminal")
	cmd.Flags().StringVar(&f.planFirst, "plan-first", "", "plan-first mode for this run: off, auto or always (routes with enforce: true)")
	cmd.Flags().Bool("plan-preview", false, "print the plan-first plan and its execution order without running it")
	cmd.MarkFlagsMutuallyExclusive("plan-first", "plan-preview")
	cmd.MarkFlagsMutuallyExclusive("app", "url")
	cmd.MarkFlagsMutuallyExclusive("json", "plain")
	return cmd
}

// runRoute runs route once and shows its events.
func runRoute(cmd *cobra.Command, cfg *Config, route string, f runFlags) error {
	input, err := readInput(cmd.InOrStdin(), f)
	if err != nil {
		return err
	}
	threadID := f.threadID
	if threadID == "" {
		threadID = uuid.NewString()
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	show := newRenderer(cfg, f)
	if !f.asJSON {
		show = lifecycleRenderer{Renderer: show, w: cfg.Stdout}
	}
	var out runOutcome
	if f.url != "" {
		out, err = runRemote(ctx, stop, cfg, f.url, threadID, route, input, f.planFirst, show)
	} else {
		out, err = runLocal(ctx, stop, cfg, f.dir, threadID, route, input, f.planFirst, show)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(cfg.Stderr, "thread:", threadID)
	out.threadID = threadID
	return out.err()
}

// readInput returns the message: --input, or stdin when that is not a
// terminal.
func readInput(stdin io.Reader, f runFlags) (string, error) {
	if f.inputSet {
		if strings.TrimSpace(f.input) == "" {
			return "", errors.New(`--input is empty: pass the message for the route, like --input "Hello"`)
		}
		return f.input, nil
	}
	if file, ok := stdin.(*os.File); ok && isTerminal(file) {
		return "", errors.New(`pass --input TEXT with the message for the route (or pipe it on stdin)`)
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxStdinInput+1))
	if err != nil {
		return "", fmt.Errorf("cannot read the message from stdin: %w; pass --input TEXT instead", err)
	}
	if len(data) > maxStdinInput {
		return "", fmt.Errorf("the message on stdin is over %d bytes; send a shorter one", maxStdinInput)
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return "", errors.New(`pass --input TEXT with the message for the route (stdin was empty)`)
	}
	return text, nil
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// newRenderer picks how events are shown: JSON lines, a live plan on a
// terminal, or plain lines.
func newRenderer(cfg *Config, f runFlags) planview.Renderer {
	switch {
	case f.asJSON:
		return &jsonLines{w: cfg.Stdout}
	case f.plain || cfg.Env("TERM") == "dumb":
		return planview.NewPlain(cfg.Stdout)
	}
	file, ok := cfg.Stdout.(*os.File)
	if !ok || !isTerminal(file) {
		return planview.NewPlain(cfg.Stdout)
	}
	width := planview.TerminalWidth(file.Fd())
	if width <= 0 {
		width, _ = strconv.Atoi(cfg.Env("COLUMNS"))
	}
	if width <= 0 {
		width = 80
	}
	return planview.NewTTY(cfg.Stdout, width)
}

// jsonLines is the renderer for --json: one {"id","event","data"} object per
// line, every event included.
type jsonLines struct{ w io.Writer }

func (j *jsonLines) Event(e stream.Event) error {
	if len(e.Data) == 0 {
		e.Data = json.RawMessage("null")
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(line, '\n'))
	return err
}

func (j *jsonLines) Close() error { return nil }

// runOutcome is how a run ended, as the done event says.
type runOutcome struct {
	output      json.RawMessage // the done event's output; nil without one
	interrupted bool            // the user pressed Ctrl-C
	threadID    string
}

// err turns the outcome into the CLI's result.
func (o runOutcome) err() error {
	var out struct {
		Error       json.RawMessage `json:"error"`
		Cancelled   bool            `json:"cancelled"`
		Interrupted bool            `json:"interrupted"`
		Interrupts  []struct {
			ID     string `json:"interruptId"`
			Kind   string `json:"kind"`
			Detail struct {
				ToolName string `json:"toolName"`
			} `json:"detail"`
		} `json:"interrupts"`
	}
	_ = json.Unmarshal(o.output, &out)
	switch {
	case out.Interrupted && len(out.Interrupts) > 0:
		var list []string
		for _, in := range out.Interrupts {
			what := in.Kind
			if in.Detail.ToolName != "" {
				what += " " + in.Detail.ToolName
			}
			list = append(list, fmt.Sprintf("interrupt %s (%s)", in.ID, what))
		}
		return appProblem(fmt.Errorf("the run is waiting for a person's decision: %s; answer it with POST /threads/%s/resume (see the README's Human approval)", strings.Join(list, ", "), o.threadID))
	case o.interrupted:
		return exitCodeError{code: ExitInterrupted, msg: "interrupted: the run was cancelled"}
	case o.output == nil:
		return appProblem(errors.New("the event stream ended before the run finished; the run may still be going on the server"))
	case len(out.Error) > 0 && string(out.Error) != "null":
		var msg string
		if json.Unmarshal(out.Error, &msg) != nil {
			msg = string(out.Error)
		}
		return appProblem(fmt.Errorf("the run failed: %s", msg))
	case out.Cancelled:
		return appProblem(errors.New("cancelled"))
	}
	return nil
}

// follow shows the events next returns until the done event or the end of
// the stream. On the first Ctrl-C it calls cancel, gives SIGINT back its
// default (a second Ctrl-C kills the process) and keeps reading, so the
// cancellation is seen through to the done event.
func follow(ctx context.Context, stopSignals func(), next func() (stream.Event, error), cancel func(), show planview.Renderer) (runOutcome, error) {
	var interrupted atomic.Bool
	finished, watching := make(chan struct{}), make(chan struct{})
	// The watcher is gone before follow returns, so that the caller ending
	// ctx afterwards (stop) cannot cancel a run that has already ended.
	defer func() { close(finished); <-watching }()
	go func() {
		defer close(watching)
		select {
		case <-ctx.Done():
			interrupted.Store(true)
			stopSignals()
			cancel()
		case <-finished:
		}
	}()
	var out runOutcome
	sawText := false
	for {
		e, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			show.Close()
			if interrupted.Load() {
				return runOutcome{interrupted: true}, nil
			}
			return runOutcome{}, appProblem(fmt.Errorf("reading the run's events: %w", err))
		}
		switch e.Type {
		case stream.TypeChunk:
			sawText = true
		case stream.TypeAnswerRejected:
			sawText = false // that text was not the answer
		}
		if e.Type == stream.TypeDone {
			out.output = doneOutput(e.Data)
			if !sawText {
				showFinalAnswer(out.output, show)
			}
		}
		if err := show.Event(e); err != nil {
			return runOutcome{}, err
		}
		if e.Type == stream.TypeDone {
			break
		}
	}
	out.interrupted = interrupted.Load()
	return out, show.Close()
}

// doneOutput returns the "output" of a done event's data.
func doneOutput(data json.RawMessage) json.RawMessage {
	var d struct {
		Output json.RawMessage `json:"output"`
	}
	if json.Unmarshal(data, &d) != nil || d.Output == nil {
		return json.RawMessage("{}")
	}
	return d.Output
}

// showFinalAnswer shows the run's last assistant message as text, for a
// model that answered without streaming any chunks.
func showFinalAnswer(output json.RawMessage, show planview.Renderer) {
	if _, ok := show.(*jsonLines); ok {
		return
	}
	var out struct {
		Messages []thread.Message `json:"messages"`
	}
	if json.Unmarshal(output, &out) != nil || len(out.Messages) == 0 {
		return
	}
	last := out.Messages[len(out.Messages)-1]
	if last.Role == thread.RoleAssistant && last.Content != "" {
		_ = show.Event(stream.Chunk(last.Content))
	}
}

// planFirstOption is the run option the --plan-first and --plan-preview
// flags set: the plan-first capability's RunOption.
const planFirstOption = "plan_first"

// strategyOptions are the run strategies' options of a run with the
// --plan-first value planFirst.
func strategyOptions(planFirst string) map[string]string {
	if planFirst == "" {
		return nil
	}
	return map[string]string{planFirstOption: planFirst}
}

// runLocal runs the route in-process on the app folder's own store.
func runLocal(ctx context.Context, stopSignals func(), cfg *Config, dir, threadID, route, input, planFirst string, show planview.Renderer) (runOutcome, error) {
	a, loadErr := loadApp(ctx, cfg, dir)
	if a == nil || a.Tree == nil {
		return runOutcome{}, appProblem(loadErr)
	}
	logger := slog.New(slog.NewTextHandler(cfg.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	s, err := openStackFor(ctx, cfg, a, logger, server.Options{}, false, 0)
	if err != nil {
		return runOutcome{}, appProblem(err)
	}
	defer s.store.Close()
	defer s.flushTelemetry()
	run, err := s.runs.Start(context.WithoutCancel(ctx), runner.Request{
		ThreadID: threadID,
		Route:    route,
		Messages: []thread.Message{{Role: thread.RoleUser, Content: input}},
		Stream:   true,
		Options:  strategyOptions(planFirst),
	})
	if err != nil {
		for _, p := range splitJoined(loadErr) {
			fmt.Fprintln(cfg.Stderr, "dawn run: app problem:", p)
		}
		return runOutcome{}, appProblem(err)
	}
	if run.Model == "offline" {
		fmt.Fprintln(cfg.Stderr, "model: offline (built in, no network); set DAWN_MODEL, model in dawn.yaml, or model in agent.md for a real one")
	}
	sub := run.Log.Subscribe(0)
	defer sub.Close()
	out, err := follow(ctx, stopSignals,
		func() (stream.Event, error) { return sub.Next(context.Background()) },
		func() { s.runs.Cancel(threadID) },
		show)
	<-run.Done() // the run's end is recorded in the store
	return out, err
}

// runRemote runs the route on the server at base through
// POST /threads/{id}/runs/stream.
func runRemote(ctx context.Context, stopSignals func(), cfg *Config, base, threadID, route, input, planFirst string, show planview.Renderer) (runOutcome, error) {
	c, err := client.New(base)
	if err != nil {
		return runOutcome{}, fmt.Errorf("--url: %w", err)
	}
	c.APIKey = cfg.Env("DAWN_API_KEY")
	// The stream must outlive Ctrl-C: it carries the cancellation through
	// to the done event.
	events, err := c.Stream(context.WithoutCancel(ctx), threadID, client.Run{Route: route, Input: client.UserInput(input), PlanFirst: planFirst})
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		return runOutcome{}, appProblem(err)
	}
	if err != nil {
		return runOutcome{}, appProblem(fmt.Errorf("cannot reach the server at %s: %w; is it running (dawn dev or dawn start)?", c.BaseURL, err))
	}
	defer events.Close()
	cancel := func() {
		cctx, done := context.WithTimeout(context.Background(), cancelTimeout)
		defer done()
		// no_run_in_flight: the run ended first; the stream carries its done event.
		if err := c.Cancel(cctx, threadID); err != nil && !client.IsKind(err, "no_run_in_flight") {
			fmt.Fprintln(cfg.Stderr, "dawn: cannot cancel the run on the server:", err)
			events.Close()
		}
	}
	next := func() (stream.Event, error) {
		e, err := events.Next()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return e, io.EOF // follow reports a stream that ended before done
		}
		return e, err
	}
	return follow(ctx, stopSignals, next, cancel, show)
}

// cancelTimeout bounds the request that cancels a remote run on Ctrl-C.
const cancelTimeout = 10 * time.Second

// lifecycleRenderer prints what the plan view does not show: the
// plan-first preview (the plan and its execution order) and the plan's
// lifecycle events (paused, done, failed, cancelled). It passes every event
// on.
type lifecycleRenderer struct {
	planview.Renderer
	w io.Writer
}

func (r lifecycleRenderer) Event(e stream.Event) error {
	var d struct {
		Text        string `json:"text"`
		PauseReason string `json:"pause_reason"`
		Reason      string `json:"reason"`
	}
	_ = json.Unmarshal(e.Data, &d)
	switch e.Type {
	case "plan_preview":
		fmt.Fprint(r.w, d.Text)
	case "plan_paused":
		fmt.Fprintf(r.w, "\nplan paused (%s): send another message to go on, or resume it with POST /threads/{id}/plan/resume\n", d.PauseReason)
	case "plan_done":
		fmt.Fprintln(r.w, "\nplan done")
	case "plan_failed", "plan_cancelled":
		fmt.Fprintf(r.w, "\n%s: %s\n", strings.ReplaceAll(e.Type, "_", " "), d.Reason)
	}
	return r.Renderer.Event(e)
}
