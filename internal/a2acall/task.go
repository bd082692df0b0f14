package a2acall

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
	"github.com/google/uuid"
)

// InterruptKind is the kind of the interrupt a remote agent's question
// parks the parent run with.
const InterruptKind = "remote_input"

// call is one Run under way: the remote task it follows and the text it
// keeps.
type call struct {
	remote *remote
	client *a2aclient.Client
	task   capabilities.RemoteTask
	sess   session
	text   *text
	// artifact is the id of the artifact whose text was kept last.
	artifact a2a.ArtifactID
	// known is closed once sess names the task; sess does not change
	// after.
	known chan struct{}
	// emitted counts the events put on the run's stream.
	emitted int
}

// message is what the call sends: the task's input on a first run, the
// person's answer on the same task and context after a park.
func (c *call) message() (*a2a.Message, error) {
	if c.task.Resume == nil {
		return a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: c.task.Input}), nil
	}
	if err := json.Unmarshal(c.task.Resume, &c.sess); err != nil || c.sess.TaskID == "" {
		return nil, fmt.Errorf("the saved remote task of this call cannot be read (%v); call the subagent again", err)
	}
	close(c.known)
	a := c.task.Answer
	if a == nil {
		return nil, fmt.Errorf("the answer to remote agent %s was lost in a restart; call the subagent again", c.remote.cfg.Card)
	}
	if a.Status == capabilities.AnswerCancelled {
		return nil, nil // follow cancels the remote task
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, answerPart(a.Payload))
	msg.TaskID, msg.ContextID = c.sess.TaskID, c.sess.ContextID
	return msg, nil
}

// answerPart is a person's answer as the part sent back: a JSON string as
// text, an object as data, anything else as its JSON text.
func answerPart(payload json.RawMessage) a2a.Part {
	var s string
	if json.Unmarshal(payload, &s) == nil {
		return a2a.TextPart{Text: s}
	}
	var obj map[string]any
	if json.Unmarshal(payload, &obj) == nil && obj != nil {
		return a2a.DataPart{Data: obj}
	}
	return a2a.TextPart{Text: string(payload)}
}

// follow sends msg over message/stream and follows the task's events to
// its end: its answer, a question for a person (a ParkCall), or an error.
// A declined answer cancels the remote task.
func (c *call) follow(ctx context.Context, msg *a2a.Message) (string, error) {
	if c.task.Answer != nil && c.task.Answer.Status == capabilities.AnswerCancelled {
		c.cancelRemote(ctx)
		return "", fmt.Errorf("a person declined to answer remote agent %s; its task was cancelled", c.remote.cfg.Card)
	}
	for attempt := 0; ; attempt++ {
		seen, answer, err := c.stream(ctx, msg)
		if err == nil || seen || attempt >= c.remote.cfg.Retries || !unreachable(err) || ctx.Err() != nil {
			return answer, err
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-timeAfter(attempt):
		}
	}
}

// stream runs one message/stream request. seen says an event arrived, so
// the request must not be sent again.
func (c *call) stream(ctx context.Context, msg *a2a.Message) (seen bool, answer string, err error) {
	for ev, err := range c.client.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg}) {
		if err != nil {
			if ctx.Err() != nil {
				return seen, "", ctx.Err()
			}
			if seen {
				return true, "", fmt.Errorf("the connection to remote agent %s broke mid-task: %w", c.remote.cfg.Card, err)
			}
			return false, "", fmt.Errorf("remote agent %s cannot be reached: %w", c.remote.cfg.Card, err)
		}
		seen = true
		done, answer, err := c.event(ctx, ev)
		if done || err != nil {
			return true, answer, err
		}
	}
	if ctx.Err() != nil {
		return seen, "", ctx.Err()
	}
	return seen, "", fmt.Errorf("remote agent %s ended its stream before the task finished", c.remote.cfg.Card)
}

// event takes one event of the task: done with the answer when it ends.
func (c *call) event(ctx context.Context, ev a2a.Event) (done bool, answer string, err error) {
	switch ev := ev.(type) {
	case *a2a.Message:
		// The agent answered without a task.
		return true, c.text.cut(join(ev.Parts)), nil
	case *a2a.Task:
		c.track(ev.ID, ev.ContextID)
		for _, art := range ev.Artifacts {
			c.artifactText(art, false)
		}
		return c.status(ctx, ev.Status)
	case *a2a.TaskStatusUpdateEvent:
		c.track(ev.TaskID, ev.ContextID)
		return c.status(ctx, ev.Status)
	case *a2a.TaskArtifactUpdateEvent:
		c.track(ev.TaskID, ev.ContextID)
		c.artifactText(ev.Artifact, ev.Append)
	}
	return false, "", nil
}

// track keeps the task's id and context from its first event that names
// them.
func (c *call) track(id a2a.TaskID, contextID string) {
	if c.sess.TaskID != "" || id == "" {
		return
	}
	c.sess = session{TaskID: id, ContextID: contextID}
	close(c.known)
}

// status takes a status of the task: its message's plan and text go on
// the stream, and a final state ends the call.
func (c *call) status(ctx context.Context, st a2a.TaskStatus) (bool, string, error) {
	c.emit(stream.New("status", map[string]any{"state": st.State}))
	var said string
	if st.Message != nil {
		c.plans(st.Message.Parts)
		said = join(st.Message.Parts)
		if said != "" && st.State == a2a.TaskStateWorking {
			if shown := c.text.stream(said); shown != "" {
				c.emit(stream.Chunk(shown))
			}
		}
	}
	card := c.remote.cfg.Card
	switch st.State {
	case a2a.TaskStateCompleted:
		if c.text.kept() == "" {
			return true, c.text.cut(said), nil
		}
		return true, c.text.kept(), nil
	case a2a.TaskStateInputRequired:
		return true, "", c.park(ctx, st.Message, said)
	case a2a.TaskStateAuthRequired:
		c.cancelRemote(ctx)
		return true, "", fmt.Errorf("remote agent %s asks for authentication a task call cannot give (%s); its task was cancelled", card, c.text.cut(said))
	case a2a.TaskStateFailed, a2a.TaskStateRejected:
		return true, "", fmt.Errorf("remote agent %s %s the task: %s", card, st.State, orNone(c.text.cut(said)))
	case a2a.TaskStateCanceled:
		return true, "", fmt.Errorf("remote agent %s cancelled the task: %s", card, orNone(c.text.cut(said)))
	}
	return false, "", nil
}

// park is the ParkCall of a task in input-required: the question is put
// to a person, and the task and context come back with the answer.
func (c *call) park(ctx context.Context, msg *a2a.Message, said string) error {
	if !c.task.Park {
		c.cancelRemote(ctx)
		return fmt.Errorf("remote agent %s asks %q, which no person can answer here; its task was cancelled", c.remote.cfg.Card, c.text.cut(said))
	}
	var data []map[string]any
	if msg != nil {
		for _, p := range msg.Parts {
			if d, ok := p.(a2a.DataPart); ok {
				data = append(data, d.Data)
			}
		}
	}
	detail, err := json.Marshal(map[string]any{
		"subagent": c.remote.cfg.Name,
		"agent":    c.remote.cfg.Card,
		"question": c.text.cut(said),
		"data":     data,
		"answer":   "resume with a payload: a string is sent back as text, a JSON object as data",
	})
	if err != nil {
		return fmt.Errorf("remote agent %s asked a question whose data cannot be kept: %w", c.remote.cfg.Card, err)
	}
	resume, _ := json.Marshal(c.sess)
	return &capabilities.ParkCall{Interrupt: capabilities.Interrupt{ID: "ask-" + uuid.NewString(), Kind: InterruptKind, Detail: detail}, Resume: resume}
}

// plans emits a plan_update for each data part that carries a plan's
// todos.
func (c *call) plans(parts a2a.ContentParts) {
	for _, p := range parts {
		d, ok := p.(a2a.DataPart)
		if !ok {
			continue
		}
		if todos, ok := d.Data["todos"].([]any); ok {
			c.emit(stream.New("plan_update", map[string]any{"todos": todos}))
		}
	}
}

// artifactText keeps an artifact's text as the answer and streams it.
func (c *call) artifactText(art *a2a.Artifact, appended bool) {
	if art == nil {
		return
	}
	c.plans(art.Parts)
	s := join(art.Parts)
	if s == "" {
		return
	}
	if !appended && c.artifact != "" && c.artifact != art.ID {
		s = "\n" + s
	}
	c.artifact = art.ID
	c.text.keep(s)
	if shown := c.text.stream(s); shown != "" {
		c.emit(stream.Chunk(shown))
	}
}

// maxEvents bounds the events one call puts on the run's stream; the
// task goes on past it, unseen until its end. A variable for the tests.
var maxEvents = 1000

func (c *call) emit(e stream.Event) {
	if c.task.Emit == nil || c.emitted >= maxEvents {
		return
	}
	c.emitted++
	c.task.Emit(e)
}

// cancelOnceKnown cancels the remote task once the stream names it,
// waiting at most cancelTimeout for that.
func (c *call) cancelOnceKnown(ctx context.Context) {
	select {
	case <-c.known:
		c.cancelRemote(ctx)
	case <-time.After(cancelTimeout):
	}
}

// cancelRemote asks the agent to cancel the task, within cancelTimeout of
// ctx's end (it may have ended: a cancelled parent run).
func (c *call) cancelRemote(ctx context.Context) {
	if c.sess.TaskID == "" {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	_, _ = c.client.CancelTask(cctx, &a2a.TaskIDParams{ID: c.sess.TaskID})
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no reason given)"
	}
	return s
}
