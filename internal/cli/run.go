package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/client"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/planview"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/router"
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
	// approve is --approve: once or deny answers every tool approval.
	approve string
	// answer is --answer: the answer to every interrupt, of any kind.
	answer string
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

Exit codes: 0 when the run succeeds, 1 when it fails, is cancelled or is left
waiting for a decision, 2 for bad arguments, 130 after Ctrl-C (which
cancels the run, or leaves a parked thread parked).

Example:
  dawn run /support/acme --app examples/app --input "Help me with my account"
  echo "Help me with my account" | dawn run /support/acme --app examples/app

On a route whose plan.md has enforce: true, --plan-first always makes the
model plan the steps first (a dependency graph the harness executes), and
--plan-preview prints that plan and its execution order without running it.

When the run parks for a person's decision (a tool listed under approve:
in agent.md, a plan with approval: required), run shows what is asked and
asks at the terminal: approve once / always / deny / edit for a tool call,
approve / reject / edit for a plan, continue / skip / cancel for a step. Then it
resumes the run and goes on showing it. --approve once (or deny) answers
every tool approval without asking, for scripts; --answer answers every
interrupt of any kind: a decision of its kind (once, always, deny for a
tool; approve, reject for a plan; continue, skip, cancel for a step;
cancel for any other kind) or a JSON payload such as
{"decision":"edit","args":{...}}. When stdin is not a
terminal and nothing answers, run exits 1 naming the interrupt and the
thread stays parked: run again with --thread ID and no --input to answer.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.inputSet = cmd.Flags().Changed("input")
			if preview, _ := cmd.Flags().GetBool("plan-preview"); preview {
				f.planFirst = "preview"
			}
			if f.approve != "" && f.approve != approveOnce && f.approve != approveDeny {
				return fmt.Errorf("--approve is %q; use once or deny", f.approve)
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
	cmd.Flags().StringVar(&f.approve, "approve", "", "answer every tool approval with once or deny, without asking")
	cmd.Flags().StringVar(&f.answer, "answer", "", "answer every interrupt, of any kind, with this decision or JSON payload, without asking")
	cmd.MarkFlagsMutuallyExclusive("approve", "answer")
	cmd.MarkFlagsMutuallyExclusive("plan-first", "plan-preview")
	cmd.MarkFlagsMutuallyExclusive("app", "url")
	cmd.MarkFlagsMutuallyExclusive("json", "plain")
	return cmd
}

// runRoute runs route once and shows its events. When the run parks for
// a person's decisions it gets them (--approve, or at the terminal),
// resumes the run and shows it on, until the run ends. With --thread on a
// parked thread and no --input, it answers the thread's interrupts first.
func runRoute(cmd *cobra.Command, cfg *Config, route string, f runFlags) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	target, closeTarget, err := openTarget(ctx, cfg, f)
	if err != nil {
		return err
	}
	defer closeTarget()
	r := &routeRun{cfg: cfg, f: f, route: route, target: target, stop: stop, threadID: f.threadID}
	out, err := r.begin(ctx, cmd.InOrStdin())
	if err != nil {
		return err
	}
	return r.settle(ctx, out)
}

// openTarget opens where dawn run runs: the server at --url, else the app
// folder in-process. The func closes it.
func openTarget(ctx context.Context, cfg *Config, f runFlags) (runTarget, func(), error) {
	if f.url != "" {
		remote, err := openRemote(cfg, f.url)
		if err != nil {
			return nil, nil, err
		}
		return remote, func() {}, nil
	}
	local, err := openLocal(ctx, cfg, f.dir)
	if err != nil {
		return nil, nil, err
	}
	return local, local.close, nil
}

// routeRun is one dawn run of a route on a thread: its first run, then
// the continuations after each decision.
type routeRun struct {
	cfg      *Config
	f        runFlags
	route    string
	target   runTarget
	stop     func() // stops catching signals, once a run shows its own cancel
	threadID string
}

// begin starts the run: on a thread parked on interrupts (--thread, no
// --input) it returns them to be answered first; else it runs the input
// on the thread, a new one without --thread.
func (r *routeRun) begin(ctx context.Context, stdin io.Reader) (runOutcome, error) {
	var out runOutcome
	if r.threadID != "" {
		pending, err := r.target.pending(ctx, r.threadID)
		if err != nil {
			return out, err
		}
		if len(pending) > 0 && r.f.inputSet {
			return out, appProblem(fmt.Errorf("thread %s is waiting for a decision on interrupt %s; run again without --input to answer it first", r.threadID, pending[0].ID))
		}
		out.interrupts = pending
	}
	if len(out.interrupts) > 0 {
		return out, nil
	}
	input, err := readInput(stdin, r.f)
	if err != nil {
		return out, err
	}
	if r.threadID == "" {
		r.threadID = uuid.NewString()
	}
	return r.target.start(ctx, r.stop, r.threadID, r.route, input, r.f.planFirst, newShow(r.cfg, r.f))
}

// settle answers the interrupts the run parks on (--approve, or at the
// terminal) and resumes it, until it ends, and reports how it ended.
func (r *routeRun) settle(ctx context.Context, out runOutcome) error {
	out, err := r.resolve(ctx, out, newAsker(r.cfg, r.f.approve, r.f.answer))
	if err != nil {
		return err
	}
	fmt.Fprintln(r.cfg.Stderr, "thread:", r.threadID)
	out.threadID = r.threadID
	return out.err()
}

// resolve answers the interrupts out parks on through ask and resumes the
// run, until it ends, and returns how it ended. Interrupts no one answers
// end it with unanswered's error.
func (r *routeRun) resolve(ctx context.Context, out runOutcome, ask *asker) (runOutcome, error) {
	for len(out.interrupts) > 0 && !out.interrupted {
		answers, err := ask.answer(ctx, out.interrupts)
		if err != nil {
			return out, r.unanswered(out, err)
		}
		next, err := r.target.resume(ctx, r.stop, r.threadID, r.route, answers, newShow(r.cfg, r.f))
		var bad *resumeError
		if errors.As(err, &bad) && ask.in != nil {
			// A person's answer the route refused (an edit off the
			// tool's schema): say why and ask again.
			fmt.Fprintln(r.cfg.Stderr, "  refused:", bad.msg)
			continue
		}
		if err != nil {
			return out, err
		}
		out = next
	}
	return out, nil
}

// unanswered ends a run whose interrupts got no answer: with nobody to
// ask, the thread stays parked (for a preview that is its success);
// interrupted while asking, it stays parked too.
func (r *routeRun) unanswered(out runOutcome, err error) error {
	fmt.Fprintln(r.cfg.Stderr, "thread:", r.threadID)
	if errors.As(err, new(problemError)) { // an --answer that does not fit
		return err
	}
	if !errors.Is(err, errNoAnswer) {
		return exitCodeError{code: ExitInterrupted, msg: "interrupted: the thread stays parked, waiting for the decision"}
	}
	if id, ok := out.previewParked(); ok && r.f.planFirst == "preview" {
		// A preview parks the run on its plan: that is its
		// success when nobody is there to approve it.
		fmt.Fprintf(r.cfg.Stderr, "the plan waits for approval as interrupt %s: answer it with `%s`, or POST /threads/%s/resume with {\"route\":%q,\"resume\":[{\"interruptId\":%q,\"status\":\"resolved\",\"payload\":\"approve\"}]}; either runs it without planning again\n", id, resumeCommand(r.route, r.threadID, r.f), r.threadID, r.route, id)
		return nil
	}
	return parkedError(out.interrupts, r.threadID, resumeCommand(r.route, r.threadID, r.f))
}

// resumeCommand is the dawn run command line that answers the interrupts
// of threadID.
func resumeCommand(route, threadID string, f runFlags) string {
	where := "--app " + f.dir
	if f.url != "" {
		where = "--url " + f.url
	}
	return fmt.Sprintf("dawn run %s %s --thread %s", route, where, threadID)
}

// newShow is the renderer of one run, or of its continuation after a
// resume.
func newShow(cfg *Config, f runFlags) planview.Renderer {
	show := newRenderer(cfg, f)
	if !f.asJSON {
		show = lifecycleRenderer{Renderer: show, w: cfg.Stdout}
	}
	return show
}

// resumeError is a resume the route refused; nothing changed, and the
// thread waits for an answer still.
type resumeError struct{ msg string }

func (e *resumeError) Error() string { return e.msg }

// runTarget is where dawn run runs: in-process on the app folder, or on a
// server.
type runTarget interface {
	// pending returns the interrupts threadID is parked on: none for a
	// thread that is not parked or does not exist.
	pending(ctx context.Context, threadID string) ([]client.Interrupt, error)
	// values returns threadID's latest state values: nil for a thread
	// that does not exist.
	values(ctx context.Context, threadID string) (map[string]json.RawMessage, error)
	// start runs input on threadID and shows it to its end.
	start(ctx context.Context, stopSignals func(), threadID, route, input, planFirst string, show planview.Renderer) (runOutcome, error)
	// resume answers threadID's interrupts and shows the run that goes
	// on to its end; answers the route refuses are a *resumeError.
	resume(ctx context.Context, stopSignals func(), threadID, route string, answers []client.Answer, show planview.Renderer) (runOutcome, error)
}

// previewParked returns the id of the plan interrupt a plan-first preview
// parked on, and false for any other outcome.
func (o runOutcome) previewParked() (string, bool) {
	var out struct {
		Interrupted bool `json:"interrupted"`
		Preview     *struct {
			InterruptID string `json:"interruptId"`
		} `json:"preview"`
	}
	if json.Unmarshal(o.output, &out) != nil || !out.Interrupted || out.Preview == nil || out.Preview.InterruptID == "" {
		return "", false
	}
	return out.Preview.InterruptID, true
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
	// interrupts are the decisions the run parked for.
	interrupts []client.Interrupt
}

// err turns the outcome into the CLI's result.
func (o runOutcome) err() error {
	var out struct {
		Error     json.RawMessage `json:"error"`
		Cancelled bool            `json:"cancelled"`
	}
	_ = json.Unmarshal(o.output, &out)
	switch {
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
			out.interrupts = parkedFor(out.output)
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

// parkedFor returns the interrupts a done event's output says the run
// parked for.
func parkedFor(output json.RawMessage) []client.Interrupt {
	var out struct {
		Interrupted bool               `json:"interrupted"`
		Interrupts  []client.Interrupt `json:"interrupts"`
	}
	if json.Unmarshal(output, &out) != nil || !out.Interrupted {
		return nil
	}
	return out.Interrupts
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

// localTarget runs routes in-process on the app folder's own store.
type localTarget struct {
	cfg     *Config
	s       *stack
	tree    *router.Tree
	loadErr error // problems of routes other than a run's, shown when it fails
	// saidOffline says the offline model's notice was shown, once is
	// enough in a chat.
	saidOffline bool
}

func openLocal(ctx context.Context, cfg *Config, dir string) (*localTarget, error) {
	a, loadErr := loadApp(ctx, cfg, dir)
	if a == nil || a.Tree == nil || errors.As(loadErr, new(*app.SettingsError)) {
		return nil, appProblem(loadErr)
	}
	logger := slog.New(slog.NewTextHandler(cfg.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	s, err := openStackFor(ctx, cfg, a, logger, server.Options{}, false, 0)
	if err != nil {
		return nil, appProblem(err)
	}
	return &localTarget{cfg: cfg, s: s, tree: a.Tree, loadErr: loadErr}, nil
}

func (l *localTarget) close() {
	l.s.flushTelemetry()
	l.s.store.Close()
}

func (l *localTarget) pending(ctx context.Context, threadID string) ([]client.Interrupt, error) {
	cp, err := l.s.store.Latest(ctx, threadID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // a new thread
	}
	if err != nil {
		return nil, appProblem(err)
	}
	list, err := capabilities.PendingInterrupts(cp.Values)
	if err != nil {
		return nil, appProblem(fmt.Errorf("thread %s: the saved interrupts cannot be read: %w", threadID, err))
	}
	out := make([]client.Interrupt, len(list))
	for i, in := range list {
		out[i] = client.Interrupt{ID: in.ID, Kind: in.Kind, Detail: in.Detail, Path: in.Path}
	}
	return out, nil
}

func (l *localTarget) values(ctx context.Context, threadID string) (map[string]json.RawMessage, error) {
	cp, err := l.s.store.Latest(ctx, threadID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, appProblem(err)
	}
	return cp.Values, nil
}

func (l *localTarget) start(ctx context.Context, stopSignals func(), threadID, route, input, planFirst string, show planview.Renderer) (runOutcome, error) {
	run, err := l.s.runs.Start(context.WithoutCancel(ctx), runner.Request{
		ThreadID: threadID,
		Route:    route,
		Messages: []thread.Message{{Role: thread.RoleUser, Content: input}},
		Stream:   true,
		Options:  strategyOptions(planFirst),
	})
	if err != nil {
		for _, p := range splitJoined(l.loadErr) {
			fmt.Fprintln(l.cfg.Stderr, "dawn run: app problem:", p)
		}
		return runOutcome{}, appProblem(err)
	}
	if run.Model == "offline" && !l.saidOffline {
		l.saidOffline = true
		fmt.Fprintln(l.cfg.Stderr, "model: offline (built in, no network); set DAWN_MODEL, model in dawn.yaml, or model in agent.md for a real one")
	}
	return l.follow(ctx, stopSignals, threadID, run, show)
}

func (l *localTarget) resume(ctx context.Context, stopSignals func(), threadID, route string, answers []client.Answer, show planview.Renderer) (runOutcome, error) {
	list := make([]capabilities.Answer, len(answers))
	for i, a := range answers {
		list[i] = capabilities.Answer{InterruptID: a.InterruptID, Status: a.Status, Payload: a.Payload}
	}
	run, err := l.s.runs.Resume(context.WithoutCancel(ctx), runner.ResumeRequest{ThreadID: threadID, Route: route, Answers: list, Stream: true})
	var bad *runner.ResumeError
	if errors.As(err, &bad) {
		return runOutcome{}, &resumeError{msg: bad.Msg}
	}
	if err != nil {
		return runOutcome{}, appProblem(err)
	}
	return l.follow(ctx, stopSignals, threadID, run, show)
}

// follow shows run's events to its end.
func (l *localTarget) follow(ctx context.Context, stopSignals func(), threadID string, run *runner.Run, show planview.Renderer) (runOutcome, error) {
	sub := run.Log.Subscribe(0)
	defer sub.Close()
	out, err := follow(ctx, stopSignals,
		func() (stream.Event, error) { return sub.Next(context.Background()) },
		func() { l.s.runs.Cancel(threadID) },
		show)
	<-run.Done() // the run's end is recorded in the store
	return out, err
}

// remoteTarget runs routes on a server through its HTTP API.
type remoteTarget struct {
	cfg *Config
	c   *client.Client
}

func openRemote(cfg *Config, base string) (*remoteTarget, error) {
	c, err := client.New(base)
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	c.APIKey = cfg.Env("DAWN_API_KEY")
	return &remoteTarget{cfg: cfg, c: c}, nil
}

func (r *remoteTarget) unreachable(err error) error {
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		return appProblem(err)
	}
	return appProblem(fmt.Errorf("cannot reach the server at %s: %w; is it running (dawn dev or dawn start)?", r.c.BaseURL, err))
}

func (r *remoteTarget) pending(ctx context.Context, threadID string) ([]client.Interrupt, error) {
	st, err := r.c.State(ctx, threadID)
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return nil, nil // a new thread
	}
	if err != nil {
		return nil, r.unreachable(err)
	}
	return st.Interrupts, nil
}

func (r *remoteTarget) values(ctx context.Context, threadID string) (map[string]json.RawMessage, error) {
	st, err := r.c.State(ctx, threadID)
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, r.unreachable(err)
	}
	return st.Values, nil
}

// start runs the route through POST /threads/{id}/runs/stream.
func (r *remoteTarget) start(ctx context.Context, stopSignals func(), threadID, route, input, planFirst string, show planview.Renderer) (runOutcome, error) {
	// The stream must outlive Ctrl-C: it carries the cancellation through
	// to the done event.
	events, err := r.c.Stream(context.WithoutCancel(ctx), threadID, client.Run{Route: route, Input: client.UserInput(input), PlanFirst: planFirst})
	if err != nil {
		return runOutcome{}, r.unreachable(err)
	}
	return r.follow(ctx, stopSignals, threadID, events, show)
}

// resume answers through POST /threads/{id}/resume.
func (r *remoteTarget) resume(ctx context.Context, stopSignals func(), threadID, route string, answers []client.Answer, show planview.Renderer) (runOutcome, error) {
	events, err := r.c.Resume(context.WithoutCancel(ctx), threadID, route, answers)
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.Kind == "invalid_resume" {
		return runOutcome{}, &resumeError{msg: apiErr.Message}
	}
	if err != nil {
		return runOutcome{}, r.unreachable(err)
	}
	return r.follow(ctx, stopSignals, threadID, events, show)
}

func (r *remoteTarget) follow(ctx context.Context, stopSignals func(), threadID string, events *client.Stream, show planview.Renderer) (runOutcome, error) {
	defer events.Close()
	cancel := func() {
		cctx, done := context.WithTimeout(context.Background(), cancelTimeout)
		defer done()
		// no_run_in_flight: the run ended first; the stream carries its done event.
		if err := r.c.Cancel(cctx, threadID); err != nil && !client.IsKind(err, "no_run_in_flight") {
			fmt.Fprintln(r.cfg.Stderr, "dawn: cannot cancel the run on the server:", err)
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
