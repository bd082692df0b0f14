package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/internal/store"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// newGate returns a gate for a scripted model and a function that opens it
// (once). Tests defer open, so that a failing test does not leave a run
// waiting on the gate while the test server shuts down.
func newGate() (chan struct{}, func()) {
	gate := make(chan struct{})
	var once sync.Once
	return gate, func() { once.Do(func() { close(gate) }) }
}

// canonical re-encodes JSON text with sorted keys and no spaces, or
// returns it as is when it is not JSON.
func canonical(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// statusOf returns the thread's status as GET /threads/:id shows it.
func statusOf(t *testing.T, url, id string) string {
	t.Helper()
	var th struct{ Status string }
	getJSON(t, url+"/threads/"+id, &th)
	return th.Status
}

// runStatuses returns the statuses of a thread's runs, newest first.
func runStatuses(t *testing.T, url, id string) []string {
	t.Helper()
	var runs []struct{ Status string }
	getJSON(t, url+"/threads/"+id+"/runs", &runs)
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Status
	}
	return out
}

// errorCode reads an error response and returns its kind and details.code.
func errorCode(t *testing.T, resp *http.Response) (kind, code string) {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct {
			Kind    string `json:"kind"`
			Details struct {
				Code string `json:"code"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("status %d: body is not a JSON error: %s", resp.StatusCode, data)
	}
	return e.Error.Kind, e.Error.Details.Code
}

// TestStoreWriteFailureDuringRunFreesTheThread: when the store cannot write
// while a run ends (a full disk), the run is reported as failed and the
// thread is not left busy: once the store can write again, the failed run
// is recorded, the thread takes a new run and can be deleted, without a
// restart.
func TestStoreWriteFailureDuringRunFreesTheThread(t *testing.T) {
	gate, open := newGate()
	defer open()
	model := dawntest.Script().
		Wait(gate).Reply("one").
		Wait(gate).Reply("two").
		Reply("three")
	db := filepath.Join(t.TempDir(), "dawn.db")
	h := apptest.New(t, supportApp(t), model, apptest.Options{StorePath: db})
	url := h.Serve(t)

	// Two runs, on two threads, both inside their model call.
	codes := make(chan int, 2)
	for _, id := range []string{"full-a", "full-b"} {
		go func() {
			resp := post(t, url+"/threads/"+id+"/runs/wait", runBody("/plain", "hi"))
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	waitFor(t, func() bool { return model.Calls() >= 2 })
	h.Store.(*store.DB).FailWrites(errors.New("database or disk is full"))
	open()
	for range 2 {
		if code := <-codes; code != http.StatusInternalServerError {
			t.Fatalf("a run whose end cannot be saved answered %d, want 500", code)
		}
	}
	// While the store still cannot write, nothing claims a run is in flight.
	if kind, _ := errorCode(t, post(t, url+"/threads/full-a/cancel", "")); kind != "no_run_in_flight" {
		t.Fatalf("cancel while the store cannot write: %s", kind)
	}
	// The thread's next run while the store still cannot write is told to
	// come back: 503 store_unavailable with Retry-After.
	next := post(t, url+"/threads/full-a/runs/wait", runBody("/plain", "now?"))
	retry := next.Header.Get("Retry-After")
	if kind, _ := errorCode(t, next); next.StatusCode != http.StatusServiceUnavailable || kind != "store_unavailable" || retry == "" {
		t.Fatalf("next run while the store cannot write = %d %s (Retry-After %q), want 503 store_unavailable with Retry-After", next.StatusCode, kind, retry)
	}
	h.Store.(*store.DB).FailWrites(nil)

	// The thread takes the next run at once.
	resp := post(t, url+"/threads/full-a/runs/wait", runBody("/plain", "again"))
	if resp.StatusCode != http.StatusOK {
		kind, _ := errorCode(t, resp)
		t.Fatalf("next run after the store recovered: %d %s", resp.StatusCode, kind)
	}
	resp.Body.Close()
	if got := runStatuses(t, url, "full-a"); len(got) != 2 || got[0] != "success" || got[1] != "error" {
		t.Fatalf("runs of full-a = %v, want [success error]", got)
	}
	if st := statusOf(t, url, "full-a"); st != "idle" {
		t.Fatalf("full-a is %s after its next run", st)
	}

	// The other thread is freed without a new run: the failed run's end is
	// recorded as soon as the store can write.
	waitFor(t, func() bool { return statusOf(t, url, "full-b") != "busy" })
	if got := runStatuses(t, url, "full-b"); len(got) != 1 || got[0] != "error" {
		t.Fatalf("runs of full-b = %v, want [error]", got)
	}
	req, _ := http.NewRequest(http.MethodDelete, url+"/threads/full-b", nil)
	del, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	del.Body.Close()
	if del.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE after the store recovered: %d", del.StatusCode)
	}
}

// partialModel streams a first chunk, then, when its context is cancelled,
// returns the partial text with a nil error, as langchaingo's OpenAI client
// does when a stream is cut off.
type partialModel struct{ streamed chan struct{} }

func (m partialModel) GenerateContent(ctx context.Context, _ []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	if opts.StreamingFunc != nil {
		_ = opts.StreamingFunc(ctx, []byte("Half an "))
	}
	close(m.streamed)
	<-ctx.Done()
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Half an ", StopReason: "stop"}}}, nil
}

func (m partialModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// TestCancelDuringStreamIsRecordedAsCancelled: a model client that returns
// its partial text without an error when the run is cancelled mid-stream
// does not turn the cancelled run into a success.
func TestCancelDuringStreamIsRecordedAsCancelled(t *testing.T) {
	model := partialModel{streamed: make(chan struct{})}
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/threads/s1/runs/stream", runBody("/plain", "hi"))
	done := make(chan []stream.Event, 1)
	go func() { done <- readSSE(t, resp) }()
	<-model.streamed

	c := post(t, url+"/threads/s1/cancel", "")
	var body struct {
		ThreadID string `json:"thread_id"`
		Status   string `json:"status"`
	}
	_ = json.NewDecoder(c.Body).Decode(&body)
	c.Body.Close()
	if c.StatusCode != http.StatusOK || body.ThreadID != "s1" || body.Status != "interrupted" {
		t.Fatalf("cancel answered %d %+v, want 200 {thread_id:s1, status:interrupted}", c.StatusCode, body)
	}
	events := <-done
	last := events[len(events)-1]
	if last.Type != stream.TypeDone || canonical(string(last.Data)) != `{"output":{"cancelled":true}}` {
		t.Fatalf("last event = %s %s", last.Type, last.Data)
	}
	if got := runStatuses(t, url, "s1"); len(got) != 1 || got[0] != "cancelled" {
		t.Fatalf("runs = %v, want [cancelled]", got)
	}
	var st struct {
		Values struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/s1/state", &st)
	for _, m := range st.Values.Messages {
		if m.Role == "assistant" {
			t.Fatalf("the truncated answer was saved: %+v", st.Values.Messages)
		}
	}
}

// TestCancelWireFormat is Dawn's cancel: 200 {thread_id, status:
// "interrupted"} with a run in flight, 409 no_run_in_flight without one, and
// a cancelled runs/wait answers 409 run_cancelled.
func TestCancelWireFormat(t *testing.T) {
	gate, open := newGate() // opened only when the test ends: the model waits for the cancel
	defer open()
	model := dawntest.Script().Wait(gate).Reply("never").Reply("later")
	h := apptest.New(t, supportApp(t), model, apptest.Options{})
	url := h.Serve(t)
	wait := make(chan *http.Response, 1)
	go func() { wait <- post(t, url+"/threads/w/runs/wait", runBody("/plain", "hi")) }()
	waitFor(t, func() bool { return model.Calls() >= 1 })
	c := post(t, url+"/threads/w/cancel", "")
	data, _ := io.ReadAll(c.Body)
	c.Body.Close()
	if c.StatusCode != http.StatusOK || canonical(string(data)) != `{"status":"interrupted","thread_id":"w"}` {
		t.Fatalf("cancel: %d %s", c.StatusCode, data)
	}
	r := <-wait
	if kind, code := errorCode(t, r); r.StatusCode != http.StatusConflict || kind != "run_cancelled" || code != "run_cancelled" {
		t.Fatalf("cancelled runs/wait: %d %s %s", r.StatusCode, kind, code)
	}
	c = post(t, url+"/threads/w/cancel", "")
	if kind, code := errorCode(t, c); c.StatusCode != http.StatusConflict || kind != "no_run_in_flight" || code != "no_run_in_flight" {
		t.Fatalf("cancel with no run: %d %s %s", c.StatusCode, kind, code)
	}
	c = post(t, url+"/threads/nobody/cancel", "")
	if kind, code := errorCode(t, c); c.StatusCode != http.StatusNotFound || code != kind {
		t.Fatalf("cancel on an unknown thread: %d %s %s", c.StatusCode, kind, code)
	}
}

// TestStartCancelPairsNeverFail sends start/cancel pairs at once over HTTP:
// no pair gets a 5xx, and the two answers agree. A cancel that reports
// "interrupted" stopped the run (runs/wait says run_cancelled); one that
// found no run left it alone (runs/wait answers 200).
func TestStartCancelPairsNeverFail(t *testing.T) {
	pairs := 1000
	if raceEnabled {
		pairs = 200 // the race detector makes each pair ten times slower
	}
	const workers = 4
	model := dawntest.Script().Reply("ok").Repeat()
	h := apptest.New(t, supportApp(t), model, apptest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")})
	url := h.Serve(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * workers}}
	t.Cleanup(client.CloseIdleConnections)
	do := func(path, body string) (int, string, error) {
		resp, err := client.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), err
	}
	var mu sync.Mutex
	var problems []string
	cancelled := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		thread := fmt.Sprintf("pair-%d", w)
		if code, body, err := do("/threads", `{"thread_id":"`+thread+`"}`); err != nil || code != http.StatusOK {
			t.Fatalf("create thread: %d %s %v", code, body, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < pairs; i += workers {
				o := racePair(do, thread)
				problem := o.problem()
				if o.cancel.code == http.StatusOK {
					cancelled[w]++
				}
				if problem != "" {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("pair %d: %s", i, problem))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("%d workers stopped on a bad pair:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	// The store agrees with what the clients were told.
	total := 0
	for w := range workers {
		total += checkCancelledRuns(t, url, fmt.Sprintf("pair-%d", w), cancelled[w])
	}
	t.Logf("%d pairs, %d runs cancelled", pairs, total)
}

// answer is one HTTP answer of a start/cancel pair.
type answer struct {
	code int
	body string
	err  error
}

// pairOutcome is what a run and a cancel sent at once were answered.
type pairOutcome struct{ run, cancel answer }

// racePair sends runs/wait and cancel on thread at once.
func racePair(do func(path, body string) (int, string, error), thread string) pairOutcome {
	var o pairOutcome
	var pair sync.WaitGroup
	pair.Add(2)
	go func() {
		defer pair.Done()
		o.run.code, o.run.body, o.run.err = do("/threads/"+thread+"/runs/wait", runBody("/plain", "hi"))
	}()
	go func() {
		defer pair.Done()
		o.cancel.code, o.cancel.body, o.cancel.err = do("/threads/"+thread+"/cancel", "")
	}()
	pair.Wait()
	return o
}

// problem says what is wrong with the pair's answers, or "": a cancel
// that interrupted must find the run cancelled, a cancel that found no run
// must find it done, and nothing may fail.
func (o pairOutcome) problem() string {
	run, cancel := o.run, o.cancel
	switch {
	case run.err != nil || cancel.err != nil:
		return fmt.Sprintf("transport: %v %v", run.err, cancel.err)
	case run.code >= 500 || cancel.code >= 500:
		return fmt.Sprintf("5xx: run %d %s, cancel %d %s", run.code, run.body, cancel.code, cancel.body)
	case cancel.code == http.StatusOK && !(run.code == http.StatusConflict && strings.Contains(run.body, `"run_cancelled"`)):
		return fmt.Sprintf("cancel said interrupted, run answered %d %s", run.code, run.body)
	case cancel.code == http.StatusConflict && !(run.code == http.StatusOK && strings.Contains(cancel.body, `"no_run_in_flight"`)):
		return fmt.Sprintf("cancel found no run (%s), run answered %d %s", cancel.body, run.code, run.body)
	case cancel.code != http.StatusOK && cancel.code != http.StatusConflict:
		return fmt.Sprintf("cancel answered %d %s", cancel.code, cancel.body)
	}
	return ""
}

// checkCancelledRuns checks that thread's runs all succeeded or were
// cancelled, and that want of them were cancelled; it returns how many.
func checkCancelledRuns(t *testing.T, url, thread string, want int) int {
	t.Helper()
	n := 0
	for _, s := range runStatuses(t, url, thread) {
		switch s {
		case "cancelled":
			n++
		case "success":
		default:
			t.Fatalf("thread %s has a run with status %s", thread, s)
		}
	}
	if n != want {
		t.Fatalf("thread %s: %d cancelled runs recorded, %d cancels answered interrupted", thread, n, want)
	}
	return n
}

// planView is the body of GET /threads/:id/plan and the supervisor
// endpoints.
type planView struct {
	ThreadID      string `json:"thread_id"`
	RunInFlight   bool   `json:"run_in_flight"`
	PendingSignal string `json:"pending_signal"`
	State         string `json:"state"`
	Items         []struct{ Status string }
}

func decodePlan(t *testing.T, resp *http.Response) planView {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v planView
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("plan body %s: %v", data, err)
	}
	return v
}

// TestPauseDuringSlowModelCallIsPending: pausing while the model is still
// thinking answers at once with 202 and the pause pending; the run pauses
// the plan at its next step boundary.
func TestPauseDuringSlowModelCallIsPending(t *testing.T) {
	gate, open := newGate()
	defer open()
	model := dawntest.Script().
		CallTool("writeTodos", list(3, 0, false)).
		Wait(gate).CallTool("writeTodos", list(3, 1, false)).
		Reply("never")
	h := apptest.New(t, enforcedApp(t, "", 3), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/threads/slow/runs/stream", runBody("/job", "go"))
	done := make(chan []stream.Event, 1)
	go func() { done <- readSSE(t, resp) }()
	waitFor(t, func() bool { return model.Calls() >= 2 })

	pr := post(t, url+"/threads/slow/plan/pause", "")
	view := decodePlan(t, pr)
	if pr.StatusCode != http.StatusAccepted || view.PendingSignal != "pause" || !view.RunInFlight || view.State != "running" {
		t.Fatalf("pause during a model call: %d %+v, want 202 with pending_signal pause", pr.StatusCode, view)
	}
	var seen planView
	getJSON(t, url+"/threads/slow/plan", &seen)
	if seen.PendingSignal != "pause" {
		t.Fatalf("GET plan while the pause is pending: %+v", seen)
	}
	open()
	events := <-done
	if !hasEvent(events, "plan_paused") || events[len(events)-1].Type != stream.TypeDone {
		t.Fatalf("events = %v", dawntest.Types(events))
	}
	seen = planView{}
	getJSON(t, url+"/threads/slow/plan", &seen)
	if seen.State != "paused" || seen.PendingSignal != "" || seen.RunInFlight {
		t.Fatalf("plan after the run = %+v", seen)
	}
	// A pause on a route without a harness-owned plan is refused at once.
	gate2, open2 := newGate()
	defer open2()
	h2 := apptest.New(t, enforcedApp(t, "", 1), dawntest.Script().Wait(gate2).Reply("x"), apptest.Options{})
	url2 := h2.Serve(t)
	go func() {
		if r, err := http.Post(url2+"/threads/open/runs/wait", "application/json", strings.NewReader(runBody("/open", "go"))); err == nil {
			r.Body.Close()
		}
	}()
	waitFor(t, func() bool { return h2.Runs.Active("open") != nil })
	if kind, _ := errorCode(t, post(t, url2+"/threads/open/plan/pause", "")); kind != "plan_not_found" {
		t.Fatalf("pause on a route without the harness: %s", kind)
	}
}

// TestPlanDuringFirstRun: the plan of a thread whose first run on an
// enforced route is still in flight is the route's draft, not a 404.
func TestPlanDuringFirstRun(t *testing.T) {
	gate, open := newGate()
	defer open()
	model := dawntest.Script().Wait(gate).CallTool("writeTodos", list(2, 0, false)).Reply("x")
	h := apptest.New(t, enforcedApp(t, "", 2), model, apptest.Options{})
	url := h.Serve(t)
	resp := post(t, url+"/threads/first/runs/stream", runBody("/job", "go"))
	done := make(chan []stream.Event, 1)
	go func() { done <- readSSE(t, resp) }()
	waitFor(t, func() bool { return model.Calls() >= 1 })
	var view planView
	if code := getJSON(t, url+"/threads/first/plan", &view); code != http.StatusOK || !view.RunInFlight || len(view.Items) != 2 {
		t.Fatalf("GET plan during the first run: %d %+v", code, view)
	}
	open()
	<-done
}

// TestPlanCancelRacingStartNeverFails sends POST runs/wait and POST
// plan/cancel at once on fresh threads of an enforced route: no 5xx, and a
// run that answers run_cancelled has its plan cancelled too (or done, when
// the cancel came after the last item).
func TestPlanCancelRacingStartNeverFails(t *testing.T) {
	pairs := 300
	if raceEnabled {
		pairs = 60
	}
	const workers = 3
	h := apptest.New(t, enforcedApp(t, "", 1), models.NewOffline(), apptest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")})
	url := h.Serve(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * workers}}
	t.Cleanup(client.CloseIdleConnections)
	do := func(path, body string) (int, string, error) {
		resp, err := client.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), err
	}
	var mu sync.Mutex
	var problems []string
	cancelled := 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < pairs; i += workers {
				thread := fmt.Sprintf("pc-%d", i)
				var runCode, cancelCode int
				var runText, cancelText string
				var pair sync.WaitGroup
				pair.Go(func() { runCode, runText, _ = do("/threads/"+thread+"/runs/wait", runBody("/job", "go")) })
				pair.Go(func() { cancelCode, cancelText, _ = do("/threads/"+thread+"/plan/cancel", "") })
				pair.Wait()
				problem := ""
				switch {
				case runCode == 0 || cancelCode == 0 || runCode >= 500 || cancelCode >= 500:
					problem = fmt.Sprintf("run %d %s, plan/cancel %d %s", runCode, runText, cancelCode, cancelText)
				case runCode == http.StatusConflict:
					if !strings.Contains(runText, `"run_cancelled"`) {
						problem = fmt.Sprintf("run answered %d %s", runCode, runText)
						break
					}
					// The plan is cancelled with the run, unless it was done
					// already: an ended plan stays as it ended.
					var plan planView
					if getJSON(t, url+"/threads/"+thread+"/plan", &plan); plan.State != "cancelled" && plan.State != "done" {
						problem = fmt.Sprintf("run cancelled, plan %+v", plan)
					}
					mu.Lock()
					cancelled++
					mu.Unlock()
				case runCode != http.StatusOK:
					problem = fmt.Sprintf("run answered %d %s", runCode, runText)
				}
				if problem != "" {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("pair %d: %s", i, problem))
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("%d workers stopped on a bad pair:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	t.Logf("%d pairs, %d runs cancelled", pairs, cancelled)
}
