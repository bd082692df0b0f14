package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

// chatFlags are the flags of dawn chat.
type chatFlags struct {
	dir, url, threadID string
	plain              bool
	approve            string
}

func newChatCmd(cfg *Config) *cobra.Command {
	var f chatFlags
	cmd := &cobra.Command{
		Use:   "chat [ROUTE]",
		Short: "Chat with a route in the terminal, turn after turn on one thread",
		Long: `chat talks with a route turn after turn on one thread: type a message and
press Enter; the answer streams in as it is written, with the live plan and
the tool calls, as dawn run shows them. When the run parks for a decision
(a tool under approve:, a command no rule allows, a plan to approve), chat
asks on the spot: once / always / deny / edit for a call, approve / reject /
edit for a plan.

The route is ROUTE, or the app's one route when it has only one. chat runs
the app folder (--app) in-process, its own Go tools included, or talks to a
server (--url, sending Authorization: Bearer $DAWN_API_KEY when that is
set). The conversation is kept in the thread: the thread id is printed when
chat starts and ends; pass it as --thread (or type /thread ID) to go on with
it later, its earlier messages shown first.

Lines starting with / are commands:
  /new          start a new thread
  /thread ID    go on with thread ID
  /plan         show the thread's plan
  /help         list the commands
  /quit         leave (so does the end of the input, Ctrl-D)

Ctrl-C cancels the run in progress; at the prompt it leaves. chat reads its
input line by line, so it works with a script on stdin as well as with a
person at a terminal.

Example:
  dawn chat /support/acme --app examples/app`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.approve != "" && f.approve != approveOnce && f.approve != approveDeny {
				return fmt.Errorf("--approve is %q; use once or deny", f.approve)
			}
			route := ""
			if len(args) == 1 {
				route = args[0]
			}
			return chat(cmd, cfg, route, f)
		},
	}
	appFlag(cmd, &f.dir)
	cmd.Flags().StringVar(&f.url, "url", "", "chat with the server at this URL (http://host:port) instead of in-process")
	cmd.Flags().StringVar(&f.threadID, "thread", "", "go on with this thread (default: a new one)")
	cmd.Flags().BoolVar(&f.plain, "plain", false, "print plain lines even on a terminal")
	cmd.Flags().StringVar(&f.approve, "approve", "", "answer every tool approval with once or deny, without asking")
	cmd.MarkFlagsMutuallyExclusive("app", "url")
	return cmd
}

// chatSession is one dawn chat: the target, the route, the current thread
// and the input it reads lines from.
type chatSession struct {
	cfg    *Config
	f      runFlags
	route  string
	target runTarget
	in     *lineReader
	thread string
}

func chat(cmd *cobra.Command, cfg *Config, route string, f chatFlags) error {
	ctx := cmd.Context()
	rf := runFlags{dir: f.dir, url: f.url, plain: f.plain, approve: f.approve, inputSet: true}
	target, closeTarget, err := openTarget(ctx, cfg, rf)
	if err != nil {
		return err
	}
	defer closeTarget()
	if route == "" {
		if route, err = onlyRoute(target, f); err != nil {
			return err
		}
	}
	s := &chatSession{cfg: cfg, f: rf, route: route, target: target, in: newLineReader(cmd.InOrStdin()), thread: f.threadID}
	if s.thread == "" {
		s.thread = uuid.NewString()
		fmt.Fprintf(cfg.Stderr, "chat with %s on a new thread %s; /help lists the commands\n", route, s.thread)
	} else if err := s.enter(ctx); err != nil {
		return err
	}
	return s.loop(ctx)
}

// onlyRoute is the route chat talks to when none is named: the app's only
// agent route.
func onlyRoute(target runTarget, f chatFlags) (string, error) {
	local, ok := target.(*localTarget)
	if !ok {
		return "", fmt.Errorf("name the route to chat with: dawn chat ROUTE --url %s (GET %s/routes lists them)", f.url, f.url)
	}
	var ids []string
	for _, r := range local.tree.Routes {
		if r.Kind != router.KindSubagent {
			ids = append(ids, r.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", appProblem(fmt.Errorf("the app in %s has no routes to chat with: add a folder with an agent.md", f.dir))
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("the app in %s has %d routes (%s): name one, like dawn chat %s", f.dir, len(ids), strings.Join(ids, ", "), ids[0])
}

// loop reads lines until the input ends or /quit: commands, and messages
// it sends as one turn each.
func (s *chatSession) loop(ctx context.Context) error {
	for {
		fmt.Fprint(s.cfg.Stderr, "> ")
		line, err := s.in.next(ctx)
		if err != nil {
			fmt.Fprintln(s.cfg.Stderr)
			fmt.Fprintln(s.cfg.Stderr, "thread:", s.thread)
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if line == "" {
			continue
		}
		quit, err := s.handle(ctx, line)
		if err != nil || quit {
			if err == nil {
				fmt.Fprintln(s.cfg.Stderr, "thread:", s.thread)
			}
			return err
		}
	}
}

// handle runs one line: a command, or a message to the route. quit says
// the chat ends; an error ends it too.
func (s *chatSession) handle(ctx context.Context, line string) (quit bool, err error) {
	if !strings.HasPrefix(line, "/") {
		return false, s.turn(ctx, line)
	}
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/quit", "/exit":
		return true, nil
	case "/new":
		s.thread = uuid.NewString()
		fmt.Fprintln(s.cfg.Stderr, "new thread", s.thread)
	case "/thread":
		if arg == "" {
			fmt.Fprintln(s.cfg.Stderr, "thread:", s.thread, "(type /thread ID to go on with another)")
			return false, nil
		}
		s.thread = arg
		return false, s.enter(ctx)
	case "/plan":
		return false, s.showPlan(ctx)
	case "/help":
		fmt.Fprintln(s.cfg.Stderr, "/new starts a new thread, /thread ID goes on with one, /plan shows the plan, /quit leaves")
	default:
		fmt.Fprintf(s.cfg.Stderr, "%s is not a command; /help lists them (to send a line starting with /, start it with //)\n", name)
		if strings.HasPrefix(line, "//") {
			return false, s.turn(ctx, line[1:])
		}
	}
	return false, nil
}

// turn sends text to the route on the chat's thread, shows the run, and
// asks for the decisions it parks on until it ends. A thread left parked
// is asked about first. A failed run, a refused request or Ctrl-C is
// shown and the chat goes on; once the input has ended it ends the chat.
func (s *chatSession) turn(ctx context.Context, text string) error {
	tctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := &routeRun{cfg: s.cfg, f: s.f, route: s.route, target: s.target, stop: stop, threadID: s.thread}
	err := s.exchange(tctx, r, text)
	if err == nil || s.in.ended.Load() {
		return err
	}
	fmt.Fprintln(s.cfg.Stderr, "dawn chat:", err)
	return nil
}

// exchange answers what the thread is parked on, if anything, then runs
// text and answers what that run parks on, to its end.
func (s *chatSession) exchange(ctx context.Context, r *routeRun, text string) error {
	pending, err := s.target.pending(ctx, s.thread)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		fmt.Fprintln(s.cfg.Stderr, "the thread waits for a decision first:")
		if err := s.settle(ctx, r, runOutcome{interrupts: pending}); err != nil {
			return err
		}
	}
	out, err := s.target.start(ctx, r.stop, s.thread, s.route, text, "", newShow(s.cfg, s.f))
	if err != nil {
		return err
	}
	return s.settle(ctx, r, out)
}

// settle answers the interrupts out parks on, resuming the run to its
// end, and shows how it ended if it failed.
func (s *chatSession) settle(ctx context.Context, r *routeRun, out runOutcome) error {
	out, err := r.resolve(ctx, out, s.asker())
	if err != nil {
		return err
	}
	return out.err()
}

// asker answers interrupts from the chat's own input (or --approve).
func (s *chatSession) asker() *asker {
	return &asker{approve: s.f.approve, in: s.in, w: s.cfg.Stderr}
}

// enter goes on with the chat's thread: it shows the messages so far and
// asks for the decisions the thread is parked on, if any.
func (s *chatSession) enter(ctx context.Context) error {
	values, err := s.target.values(ctx, s.thread)
	if err != nil {
		return err
	}
	if values == nil {
		fmt.Fprintf(s.cfg.Stderr, "chat with %s on thread %s (new)\n", s.route, s.thread)
		return nil
	}
	fmt.Fprintf(s.cfg.Stderr, "chat with %s on thread %s; so far:\n", s.route, s.thread)
	showHistory(s.cfg.Stdout, values)
	pending, err := s.target.pending(ctx, s.thread)
	if err != nil || len(pending) == 0 {
		return err
	}
	tctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := &routeRun{cfg: s.cfg, f: s.f, route: s.route, target: s.target, stop: stop, threadID: s.thread}
	if err := s.settle(tctx, r, runOutcome{interrupts: pending}); err != nil {
		if s.in.ended.Load() {
			return err
		}
		fmt.Fprintln(s.cfg.Stderr, "dawn chat:", err)
	}
	return nil
}

// maxHistoryShown is how many of a thread's latest messages chat shows when
// it goes on with the thread.
const maxHistoryShown = 20

// showHistory prints a thread's latest user and assistant messages, one
// line each.
func showHistory(w io.Writer, values map[string]json.RawMessage) {
	var msgs []thread.Message
	_ = json.Unmarshal(values["messages"], &msgs)
	var lines []string
	for _, m := range msgs {
		text := strings.TrimSpace(m.Content)
		if text == "" || (m.Role != thread.RoleUser && m.Role != thread.RoleAssistant) {
			continue
		}
		who := "you"
		if m.Role == thread.RoleAssistant {
			who = "assistant"
		}
		lines = append(lines, fmt.Sprintf("  %s: %s", who, firstLine(text, 200)))
	}
	if len(lines) > maxHistoryShown {
		fmt.Fprintf(w, "  (%d earlier messages)\n", len(lines)-maxHistoryShown)
		lines = lines[len(lines)-maxHistoryShown:]
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// firstLine is text's first line, cut to at most max characters.
func firstLine(text string, max int) string {
	text, _, more := strings.Cut(text, "\n")
	if r := []rune(text); len(r) > max {
		return string(r[:max]) + "…"
	}
	if more {
		return text + " …"
	}
	return text
}

// showPlan prints the thread's plan, or says it has none.
func (s *chatSession) showPlan(ctx context.Context) error {
	values, err := s.target.values(ctx, s.thread)
	if err != nil {
		return err
	}
	var todos []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	}
	_ = json.Unmarshal(values["todos"], &todos)
	if len(todos) == 0 {
		fmt.Fprintln(s.cfg.Stdout, "no plan yet on this thread")
		return nil
	}
	for i, t := range todos {
		fmt.Fprintf(s.cfg.Stdout, "  %d. %s %s\n", i+1, statusBox(t.Status), t.Content)
	}
	return nil
}
