package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dawn-go/dawn/client"
)

// Approve values of dawn run --approve.
const (
	approveOnce = "once"
	approveDeny = "deny"
)

// Interrupt kinds dawn run knows how to ask about; any other is asked for a
// JSON payload.
const (
	kindTool    = "tool"
	kindCommand = "command"
	kindPlan    = "plan"
	kindStep    = "step"
)

// errNoAnswer ends the answering of a parked run: no one answered (stdin is
// not a terminal and --approve does not cover the interrupt, or stdin
// ended). The thread stays parked.
var errNoAnswer = errors.New("no answer")

// asker answers the interrupts a parked run waits for: --approve answers
// tool approvals, a person at the terminal answers the rest.
type asker struct {
	// approve is --approve: "once", "deny" or "".
	approve string
	// fixed is --answer: the answer to every interrupt, or "".
	fixed string
	// in reads a person's answers; nil when there is no terminal to ask at.
	in *lineReader
	// w shows the interrupts and the questions.
	w io.Writer
}

// newAsker asks at cfg.Prompt when set, else at stdin when that is a
// terminal.
func newAsker(cfg *Config, approve, fixed string) *asker {
	a := &asker{approve: approve, fixed: fixed, w: cfg.Stderr}
	if r := cfg.prompt(); r != nil {
		a.in = newLineReader(r)
	}
	return a
}

// answer shows each interrupt and returns the answers to all of them.
// ctx ending (Ctrl-C) while a question waits returns ctx's error; no one
// to ask returns errNoAnswer.
func (a *asker) answer(ctx context.Context, pending []client.Interrupt) ([]client.Answer, error) {
	answers := make([]client.Answer, 0, len(pending))
	for _, in := range pending {
		describe(a.w, in)
		if (in.Kind == kindTool || in.Kind == kindCommand) && a.approve != "" {
			fmt.Fprintf(a.w, "  answered %s (--approve)\n", a.approve)
			answers = append(answers, resolved(in.ID, a.approve))
			continue
		}
		if a.fixed != "" {
			ans, err := fixedAnswer(in, a.fixed)
			if err != nil {
				return nil, appProblem(err)
			}
			fmt.Fprintf(a.w, "  answered %s (--answer)\n", a.fixed)
			answers = append(answers, ans)
			continue
		}
		if a.in == nil {
			return nil, errNoAnswer
		}
		ans, err := a.ask(ctx, in)
		if err != nil {
			return nil, err
		}
		answers = append(answers, ans)
	}
	return answers, nil
}

// ask asks about one interrupt until the person gives an answer of its
// kind.
func (a *asker) ask(ctx context.Context, in client.Interrupt) (client.Answer, error) {
	for {
		switch in.Kind {
		case kindTool:
			word, err := a.choose(ctx, "approve once / always / deny / edit? ", "once", "always", "deny", "edit")
			if err != nil || word != "edit" {
				return resolved(in.ID, word), err
			}
			args, err := a.object(ctx, "the call's new arguments, a JSON object: ")
			if err != nil {
				return client.Answer{}, err
			}
			payload, _ := json.Marshal(map[string]json.RawMessage{"decision": json.RawMessage(`"edit"`), "args": args})
			return client.Answer{InterruptID: in.ID, Status: "resolved", Payload: payload}, nil
		case kindCommand:
			word, err := a.choose(ctx, "approve once / always / deny / edit? ", "once", "always", "deny", "edit")
			if err != nil || word != "edit" {
				return resolved(in.ID, word), err
			}
			command, err := a.command(ctx)
			if err != nil {
				return client.Answer{}, err
			}
			payload, _ := json.Marshal(map[string]string{"decision": "edit", "command": command})
			return client.Answer{InterruptID: in.ID, Status: "resolved", Payload: payload}, nil
		case kindPlan:
			return a.askPlan(ctx, in)
		case kindStep:
			word, err := a.choose(ctx, "continue / skip / cancel? ", "continue", "skip", "cancel")
			return resolved(in.ID, word), err
		default:
			text, err := a.line(ctx, "answer with a JSON payload, or cancel: ")
			if err != nil {
				return client.Answer{}, err
			}
			if text == "cancel" {
				return client.Answer{InterruptID: in.ID, Status: "cancelled"}, nil
			}
			if !json.Valid([]byte(text)) {
				fmt.Fprintln(a.w, "  that is not JSON")
				continue
			}
			return client.Answer{InterruptID: in.ID, Status: "resolved", Payload: json.RawMessage(text)}, nil
		}
	}
}

// askPlan asks about a proposed plan: approve, reject, or edit it into
// another (the todos of a plan.md plan, or a plan-first plan).
func (a *asker) askPlan(ctx context.Context, in client.Interrupt) (client.Answer, error) {
	word, err := a.choose(ctx, "approve / reject / edit? ", "approve", "reject", "edit")
	if err != nil || word != "edit" {
		return resolved(in.ID, word), err
	}
	edit, err := a.object(ctx, `the new plan, a JSON object: {"todos":[{"content":"…","status":"pending"}]} (or {"plan":{…}} for a plan-first plan): `)
	if err != nil {
		return client.Answer{}, err
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(edit, &fields)
	fields["decision"] = json.RawMessage(`"edit"`)
	payload, _ := json.Marshal(fields)
	return client.Answer{InterruptID: in.ID, Status: "resolved", Payload: payload}, nil
}

// kindWords are the decisions of the interrupt kinds dawn run knows.
var kindWords = map[string][]string{
	kindTool:    {"once", "always", "deny"},
	kindCommand: {"once", "always", "deny"},
	kindPlan:    {"approve", "reject"},
	kindStep:    {"continue", "skip", "cancel"},
}

// fixedAnswer is the answer --answer gives to in: a decision word of its
// kind, "cancel" for a kind dawn run does not know, or a JSON payload sent
// as it is (such as {"decision":"edit","args":{…}}).
func fixedAnswer(in client.Interrupt, value string) (client.Answer, error) {
	if json.Valid([]byte(value)) {
		return client.Answer{InterruptID: in.ID, Status: "resolved", Payload: json.RawMessage(value)}, nil
	}
	words, known := kindWords[in.Kind]
	switch {
	case known && slices.Contains(words, value):
		return resolved(in.ID, value), nil
	case known:
		return client.Answer{}, fmt.Errorf("--answer %s does not answer interrupt %s, a %s interrupt: use %s, or a JSON payload", value, in.ID, in.Kind, strings.Join(words, ", "))
	case value == "cancel":
		return client.Answer{InterruptID: in.ID, Status: "cancelled"}, nil
	}
	return resolved(in.ID, value), nil
}

// choose asks question until the answer is one of words, or a word's first
// letter, in any case.
func (a *asker) choose(ctx context.Context, question string, words ...string) (string, error) {
	for {
		text, err := a.line(ctx, question)
		if err != nil {
			return "", err
		}
		text = strings.ToLower(text)
		for _, w := range words {
			if text == w || text == w[:1] {
				return w, nil
			}
		}
		fmt.Fprintf(a.w, "  answer %s\n", strings.Join(words, ", "))
	}
}

// command asks until the answer is a command to run, not blank.
func (a *asker) command(ctx context.Context) (string, error) {
	for {
		text, err := a.line(ctx, "the command to run instead: ")
		if err != nil || strings.TrimSpace(text) != "" {
			return text, err
		}
		fmt.Fprintln(a.w, "  that is blank")
	}
}

// object asks question until the answer is a JSON object.
func (a *asker) object(ctx context.Context, question string) (json.RawMessage, error) {
	for {
		text, err := a.line(ctx, question)
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if json.Unmarshal([]byte(text), &obj) == nil && obj != nil {
			return json.RawMessage(text), nil
		}
		fmt.Fprintln(a.w, `  that is not a JSON object, like {"env":"staging"}`)
	}
}

// line asks question and returns the next line typed, trimmed. The end of
// the input is errNoAnswer; ctx ending first is ctx's error.
func (a *asker) line(ctx context.Context, question string) (string, error) {
	fmt.Fprint(a.w, question)
	text, err := a.in.next(ctx)
	if err != nil {
		fmt.Fprintln(a.w)
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", errNoAnswer // the input ended, or cannot be read
	}
	return text, nil
}

// lineReader hands out the lines of a reader one at a time. One goroutine
// reads them, so that a question given up on (Ctrl-C) leaves its line for
// the next one instead of a second reader racing the first.
type lineReader struct {
	r     *bufio.Reader
	once  sync.Once
	lines chan lineRead
	// ended is set once next has seen the end of the input.
	ended atomic.Bool
}

// lineRead is one line, or the error that ended the input.
type lineRead struct {
	text string
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReader(r), lines: make(chan lineRead)}
}

// next returns the next line, trimmed; io.EOF (or the read's error) once
// the input ends; ctx's error when ctx ends first, leaving the line to the
// next call.
func (l *lineReader) next(ctx context.Context) (string, error) {
	l.once.Do(func() { go l.pump() })
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case got, ok := <-l.lines:
		if !ok {
			l.ended.Store(true)
			return "", io.EOF
		}
		return got.text, got.err
	}
}

// pump reads lines until the input ends, then closes lines.
func (l *lineReader) pump() {
	defer close(l.lines)
	for {
		text, err := l.r.ReadString('\n')
		trimmed := strings.TrimSpace(text)
		if err != nil && (trimmed == "" || !errors.Is(err, io.EOF)) {
			if !errors.Is(err, io.EOF) {
				l.lines <- lineRead{err: err}
			}
			return
		}
		l.lines <- lineRead{text: trimmed}
		if err != nil {
			return
		}
	}
}

func resolved(id, word string) client.Answer {
	payload, _ := json.Marshal(word)
	return client.Answer{InterruptID: id, Status: "resolved", Payload: payload}
}

// describe shows what an interrupt asks: the tool and its arguments, the
// proposed plan, or the detail as it is.
func describe(w io.Writer, in client.Interrupt) {
	where := ""
	if len(in.Path) > 0 {
		where = " in a subagent"
	}
	switch in.Kind {
	case kindTool:
		var d struct {
			ToolName    string `json:"toolName"`
			ArgsPreview string `json:"argsPreview"`
		}
		_ = json.Unmarshal(in.Detail, &d)
		fmt.Fprintf(w, "\napproval needed%s (interrupt %s): tool %s\n  arguments: %s\n", where, in.ID, d.ToolName, d.ArgsPreview)
	case kindCommand:
		var d struct {
			Command           string   `json:"command"`
			Unknown           []string `json:"unknown"`
			SuggestedPatterns []string `json:"suggestedPatterns"`
		}
		_ = json.Unmarshal(in.Detail, &d)
		fmt.Fprintf(w, "\napproval needed%s (interrupt %s): command\n  $ %s\n  no rule allows: %s\n", where, in.ID, d.Command, strings.Join(d.Unknown, "; "))
		if len(d.SuggestedPatterns) > 0 {
			fmt.Fprintf(w, "  always allows commands starting with: %s\n", strings.Join(d.SuggestedPatterns, ", "))
		}
	case kindPlan:
		var d struct {
			Todos []struct {
				Content string `json:"content"`
				Status  string `json:"status"`
			} `json:"todos"`
		}
		_ = json.Unmarshal(in.Detail, &d)
		fmt.Fprintf(w, "\napproval needed%s (interrupt %s): the proposed plan\n", where, in.ID)
		for i, t := range d.Todos {
			fmt.Fprintf(w, "  %d. %s %s\n", i+1, statusBox(t.Status), t.Content)
		}
	default:
		fmt.Fprintf(w, "\ndecision needed%s (interrupt %s): %s\n  %s\n", where, in.ID, in.Kind, in.Detail)
	}
}

// statusBox is the plain plan view's box for a todo status.
func statusBox(status string) string {
	switch status {
	case "in_progress":
		return "[>]"
	case "completed":
		return "[x]"
	}
	return "[ ]"
}

// parkedError says that a run waits for decisions no one gave, and how to
// give them; the thread stays parked.
func parkedError(pending []client.Interrupt, threadID, resumeCmd string) error {
	var list []string
	tools := false
	for _, in := range pending {
		what := in.Kind
		if in.Kind == kindTool {
			tools = true
			var d struct {
				ToolName string `json:"toolName"`
			}
			_ = json.Unmarshal(in.Detail, &d)
			what += " " + d.ToolName
		}
		list = append(list, fmt.Sprintf("interrupt %s (%s)", in.ID, what))
	}
	how := fmt.Sprintf("`%s --answer DECISION` (the decisions of each kind are in docs/approval.md), or `%s` at a terminal", resumeCmd, resumeCmd)
	if tools {
		how = fmt.Sprintf("`%s --approve once` (or deny), %s", resumeCmd, how)
	}
	return appProblem(fmt.Errorf("the run is waiting for a person's decision: %s; no one answered it (stdin is not a terminal, or it ended), so the thread stays parked: answer it with %s, or with POST /threads/%s/resume",
		strings.Join(list, ", "), how, threadID))
}
