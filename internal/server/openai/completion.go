package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/labstack/echo/v4"
)

// completion is what every response of one request shares.
type completion struct {
	id, model string
	created   int64
	threadID  string
	// kept is whether the thread outlives the request.
	kept bool
}

// usage is OpenAI's token usage.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// chatCompletion is a non-streamed answer.
type chatCompletion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
}

type choice struct {
	Index        int             `json:"index"`
	Message      *chatMessageOut `json:"message,omitempty"`
	Delta        *delta          `json:"delta,omitempty"`
	FinishReason *string         `json:"finish_reason"`
}

type chatMessageOut struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type delta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content,omitempty"`
}

// chunk is one chat.completion.chunk.
type chunk struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
}

var stop = "stop"

// result is the chat.completion of a finished run, or its failure.
func (o *completion) result(run *runner.Run) (*chatCompletion, error) {
	text, err := o.answer(run)
	if err != nil {
		return nil, err
	}
	return &chatCompletion{
		ID: o.id, Object: "chat.completion", Created: o.created, Model: o.model,
		Choices: []choice{{Message: &chatMessageOut{Role: thread.RoleAssistant, Content: text}, FinishReason: &stop}},
		Usage:   usageOf(run),
	}, nil
}

// answer is the text a finished run answers with: its final answer, or,
// for a run parked for a person's decision, what it waits for. A run that
// failed or was cancelled is an error.
func (o *completion) answer(run *runner.Run) (string, error) {
	if ints := run.Interrupts(); len(ints) > 0 {
		return o.parked(ints), nil
	}
	if err := failure(run); err != nil {
		return "", err
	}
	var out struct {
		Messages []thread.Message `json:"messages"`
	}
	_ = json.Unmarshal(run.Output(), &out)
	for i := len(out.Messages) - 1; i >= 0; i-- {
		if m := out.Messages[i]; m.Role == thread.RoleAssistant && len(m.ToolCalls) == 0 {
			return m.Content, nil
		}
	}
	return "", nil
}

// failure is the error of a run that did not answer, or nil.
func failure(run *runner.Run) *apiError {
	if run.Cancelled() {
		return &apiError{Status: http.StatusConflict, Type: "server_error", Code: "run_cancelled", Msg: "the run on thread " + run.ThreadID + " was cancelled before it finished"}
	}
	err := run.Err()
	if err == nil {
		return nil
	}
	var me *runner.ModelError
	if errors.As(err, &me) {
		return &apiError{Status: http.StatusBadGateway, Type: "server_error", Code: "model_error", Msg: err.Error()}
	}
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "run_failed", Msg: err.Error()}
}

// parked describes the interrupts a run parked on, and how to answer them:
// on a kept thread with Dawn's POST /threads/:id/resume.
func (o *completion) parked(ints []capabilities.Interrupt) string {
	var b strings.Builder
	b.WriteString("The run is waiting for a person's decision before it goes on:")
	for _, in := range ints {
		fmt.Fprintf(&b, "\n- interrupt %s (%s): %s", in.ID, in.Kind, compact(in.Detail))
	}
	if o.kept {
		fmt.Fprintf(&b, "\nAnswer with POST /threads/%s/resume, naming each interrupt id.", o.threadID)
	} else {
		b.WriteString("\nThis request named no thread, so its run cannot be resumed: send the Dawn-Thread-Id header to keep the thread and answer the interrupt.")
	}
	return b.String()
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// usageOf sums the token counts of the run's own model calls (its
// subagents' are theirs); nil when the provider reported none.
func usageOf(run *runner.Run) *usage {
	var u usage
	seen := false
	for _, e := range run.Log.Since(0) {
		if e.Type != stream.TypeModelCall {
			continue
		}
		var mc struct {
			In  *int `json:"input_tokens"`
			Out *int `json:"output_tokens"`
		}
		if json.Unmarshal(e.Data, &mc) != nil || (mc.In == nil && mc.Out == nil) {
			continue
		}
		seen = true
		if mc.In != nil {
			u.PromptTokens += *mc.In
		}
		if mc.Out != nil {
			u.CompletionTokens += *mc.Out
		}
	}
	if !seen {
		return nil
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return &u
}

func (o *completion) chunk(d *delta, finish *string) chunk {
	return chunk{ID: o.id, Object: "chat.completion.chunk", Created: o.created, Model: o.model, Choices: []choice{{Delta: d, FinishReason: finish}}}
}

// stream answers with chat.completion.chunk server-sent events: the role,
// the text as the agent streams it, a last chunk with finish_reason, the
// usage when asked for, then data: [DONE]. A run that fails after the
// stream began ends with an event holding OpenAI's error body. A client
// that leaves cancels the run.
func (s *endpoint) stream(c echo.Context, run *runner.Run, o *completion, withUsage bool) error {
	w := c.Response()
	wire.StartSSE(c, run.ID)
	w.WriteHeader(http.StatusOK)
	send := func(v any) bool {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", wire.MustJSON(v)); err != nil {
			return false
		}
		w.Flush()
		return true
	}
	abandon := func() error {
		run.Cancel()
		<-run.Done()
		return nil
	}
	if !send(o.chunk(&delta{Role: thread.RoleAssistant}, nil)) {
		return abandon()
	}
	defer s.host.Subscribed()()
	ping := func() bool {
		if err := stream.WriteComment(w, "keep-alive"); err != nil {
			return false
		}
		w.Flush()
		return true
	}
	streamed, err := relay(c.Request().Context(), run, o, send, ping)
	if err != nil {
		return abandon()
	}
	<-run.Done()
	if !o.finish(run, streamed, withUsage, send) {
		return nil
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	w.Flush()
	return nil
}

// relay sends the text the run streams as content deltas until its log
// ends, with a keep-alive comment (ping) after a quiet while, and reports
// whether it sent any text; an error means the client left.
func relay(ctx context.Context, run *runner.Run, o *completion, send func(any) bool, ping func() bool) (bool, error) {
	src := run.Log.Subscribe(0)
	streamed := false
	for {
		waitCtx, cancel := context.WithTimeout(ctx, wire.KeepAlive)
		e, err := src.Next(waitCtx)
		cancel()
		switch {
		case err == nil:
			if e.Type != stream.TypeChunk {
				continue
			}
			if text := stream.ChunkText(e.Data); text != "" {
				streamed = true
				if !send(o.chunk(&delta{Content: text}, nil)) {
					return streamed, io.ErrClosedPipe
				}
			}
		case errors.Is(err, io.EOF):
			return streamed, nil
		case ctx.Err() != nil:
			return streamed, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if !ping() {
				return streamed, io.ErrClosedPipe
			}
		default:
			return streamed, nil
		}
	}
}

// finish sends the end of a finished run's stream: what it waits for when
// it parked (or its whole answer when none was streamed), the chunk with
// finish_reason and the usage; or its error. It reports whether [DONE]
// should follow.
func (o *completion) finish(run *runner.Run, streamed, withUsage bool, send func(any) bool) bool {
	text, err := o.answer(run)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			send(ae.body())
		}
		return false
	}
	if len(run.Interrupts()) > 0 || !streamed && text != "" {
		if !send(o.chunk(&delta{Content: text}, nil)) {
			return false
		}
	}
	if !send(o.chunk(&delta{}, &stop)) {
		return false
	}
	if withUsage {
		last := chunk{ID: o.id, Object: "chat.completion.chunk", Created: o.created, Model: o.model, Choices: []choice{}, Usage: usageOf(run)}
		if last.Usage == nil {
			last.Usage = &usage{}
		}
		return send(last)
	}
	return true
}
