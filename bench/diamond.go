package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/internal/planfirst"
	"github.com/dawn-go/dawn/stream"
)

// The --diamond mode reproduces issue #18's row "plan-first diamond
// (A → B∥C → D), each step 1 s: ≈ 3 s": one plan-first route whose planner
// answers with the diamond, each step's worker answering after
// --step-latency, timed with parallel 1 and with parallel 2 (or the
// --parallel list) in alternating rounds.

// diamondStepMarker opens each step's task in the mock's plan; the mock
// reads the step's id after it.
const diamondStepMarker = "DIAMOND STEP "

// diamondPlan is the planner's answer: A; B and C after A; D after both.
var diamondPlan = `{"goal":"Answer with the diamond","steps":[` +
	`{"id":"A","task":"` + diamondStepMarker + `A: find the facts."},` +
	`{"id":"B","task":"` + diamondStepMarker + `B: check the first half of #A.summary","deps":["A"]},` +
	`{"id":"C","task":"` + diamondStepMarker + `C: check the second half of #A.summary","deps":["A"]},` +
	`{"id":"D","task":"` + diamondStepMarker + `D: combine #B.summary and #C.summary","deps":["B","C"]}]}`

// diamondAnswer is the final answer's text.
const diamondAnswer = "The diamond is done."

// Kinds of request the diamond mock tells apart.
const (
	reqPlanner = "planner" // plan-first's planning directive
	reqStep    = "step"    // a step's worker: its task carries diamondStepMarker
	reqAnswer  = "answer"  // the final answer after the report
	reqOther   = "other"   // anything else (answered at once with text)
)

// classifyDiamond tells what a chat request is from its last user message:
// the planning directive (planfirst.DirectivePrefix), the report that asks
// for the final answer (planfirst.ReportPrefix), or a step's task with its
// id after diamondStepMarker.
func classifyDiamond(body []byte) (kind, step string, err error) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "", "", fmt.Errorf("not a chat completion request: %w", err)
	}
	last := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = contentText(m.Content)
		}
	}
	switch {
	case strings.HasPrefix(strings.TrimSpace(last), planfirst.DirectivePrefix):
		return reqPlanner, "", nil
	case strings.Contains(last, planfirst.ReportPrefix):
		return reqAnswer, "", nil
	}
	if _, after, ok := strings.Cut(last, diamondStepMarker); ok {
		id, _, _ := strings.Cut(after, ":")
		return reqStep, strings.TrimSpace(id), nil
	}
	return reqOther, "", nil
}

// diamondMock is an OpenAI chat-completions server on loopback for the
// diamond: the planner gets the plan at once, each step's worker a short
// text after stepLatency, the final answer at once.
type diamondMock struct {
	stepLatency time.Duration
	url         string
	srv         *http.Server
	steps       atomic.Int64 // step requests answered
	other       atomic.Int64 // requests of no known kind
}

func startDiamondMock(stepLatency time.Duration) (*diamondMock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &diamondMock{stepLatency: stepLatency, url: "http://" + ln.Addr().String() + "/v1"}
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: time.Minute}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *diamondMock) close() { _ = m.srv.Close() }

func (m *diamondMock) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"the diamond mock serves /v1/chat/completions only"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	kind, step, err := classifyDiamond(body)
	if err != nil {
		http.Error(w, `{"error":{"message":`+strconv.Quote(err.Error())+`}}`, http.StatusBadRequest)
		return
	}
	var streamed struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(body, &streamed)
	text := diamondAnswer
	switch kind {
	case reqPlanner:
		text = diamondPlan
	case reqStep:
		t := time.NewTimer(m.stepLatency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		m.steps.Add(1)
		text = "Result of step " + step + "."
	case reqOther:
		m.other.Add(1)
	}
	writeMockText(w, streamed.Stream, text)
}

// writeMockText answers with one assistant text, as JSON or as chunks.
func writeMockText(w http.ResponseWriter, streamed bool, text string) {
	usage := mockUsage(10, 10)
	if !streamed {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-diamond","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":`+
			strconv.Quote(text)+`},"finish_reason":"stop"}],"usage":`+usage+`}`)
		return
	}
	const head = `data: {"id":"chatcmpl-diamond","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[`
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, head+`{"index":0,"delta":{"role":"assistant","content":`+strconv.Quote(text)+`},"finish_reason":null}]}`+"\n\n"+
		head+`{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
		head+`],"usage":`+usage+`}`+"\n\n"+
		"data: [DONE]\n\n")
}

// parseParallelList reads --parallel: a comma-separated list of 1 to 16.
func parseParallelList(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 16 {
			return nil, fmt.Errorf("--parallel %q: pass a comma-separated list of numbers from 1 to 16, like 1,2", s)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// diamondIdeal is the wall time the diamond needs with parallel p when
// only the steps take time: A, then B and C (together when p ≥ 2), then D.
func diamondIdeal(p int, step time.Duration) time.Duration {
	middle := 2
	if p >= 2 {
		middle = 1
	}
	return time.Duration(2+middle) * step
}

// diamondRow is one parallel setting's wall times.
type diamondRow struct {
	Parallel int       `json:"parallel"`
	Seconds  []float64 `json:"seconds"`
	Median   float64   `json:"median_s"`
	Min      float64   `json:"min_s"`
	Max      float64   `json:"max_s"`
	Ideal    float64   `json:"ideal_s"`
	Ratio    float64   `json:"ratio"` // median / ideal
}

func diamondMain(ctx context.Context, opts options) int {
	rows, err := runDiamond(ctx, opts)
	if len(rows) > 0 {
		if opts.json {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rows)
		} else {
			fmt.Printf("plan-first diamond (A → B∥C → D), step %s, %d repeats, runs/stream on one `dawn start`\n", opts.stepLatency, opts.repeat)
			fmt.Printf("%-9s %10s %20s %8s %7s\n", "parallel", "median s", "min–max s", "ideal s", "ratio")
			for _, r := range rows {
				fmt.Printf("%-9d %10.3f %20s %8.3f %7.3f\n", r.Parallel, r.Median, fmt.Sprintf("%.3f–%.3f", r.Min, r.Max), r.Ideal, r.Ratio)
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --diamond:", err)
		return 1
	}
	return 0
}

func runDiamond(ctx context.Context, opts options) ([]diamondRow, error) {
	pars, err := parseParallelList(opts.parallel)
	if err != nil {
		return nil, err
	}
	tmp, bin, err := scratch(ctx, opts, "dawndiamond-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	app := filepath.Join(tmp, "app")
	files := map[string]string{}
	for _, p := range pars {
		base := fmt.Sprintf("diamond%d/", p)
		files[base+"agent.md"] = "---\nmodel: openai:gpt-4o-mini\ndescription: Plan-first diamond, parallel " + strconv.Itoa(p) + ".\n---\nYou do each task you are given. Be brief.\n"
		files[base+"plan.md"] = fmt.Sprintf("---\nenforce: true\nmode: always\nparallel: %d\n---\n- [ ] Do the job\n", p)
	}
	if err := writeFiles(app, files); err != nil {
		return nil, err
	}
	mock, err := startDiamondMock(opts.stepLatency)
	if err != nil {
		return nil, err
	}
	defer mock.close()
	env := []string{"OPENAI_BASE_URL=" + mock.url, "OPENAI_API_KEY=test"}
	srv, err := start(ctx, "dawn start", bin, []string{"start", "--app", app, "--host", "127.0.0.1", "--port", "0"}, env, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer srv.stop(15 * time.Second)
	if err := waitHealthy(ctx, srv.url+"/healthz", 10*time.Second); err != nil {
		return nil, err
	}
	client := &http.Client{}
	times := make(map[int][]time.Duration, len(pars))
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	for round := range opts.repeat {
		order := slices.Clone(pars)
		if round%2 == 1 { // alternate which setting goes first
			slices.Reverse(order)
		}
		for _, p := range order {
			d, err := diamondRun(ctx, client, srv.url, fmt.Sprintf("/diamond%d", p), fmt.Sprintf("d-%s-%d-%d", tag, round, p))
			if err != nil {
				return nil, fmt.Errorf("round %d, parallel %d: %w", round+1, p, err)
			}
			times[p] = append(times[p], d)
		}
	}
	if got, want := mock.steps.Load(), int64(4*opts.repeat*len(pars)); got != want {
		return nil, fmt.Errorf("the mock answered %d step requests, not %d (4 per run): the steps did not each reach the model once", got, want)
	}
	if n := mock.other.Load(); n > 0 {
		return nil, fmt.Errorf("the mock got %d requests it could not classify (not the planner, a step or the answer): plan-first's requests changed shape", n)
	}
	var rows []diamondRow
	for _, p := range pars {
		secs := make([]float64, len(times[p]))
		for i, d := range times[p] {
			secs[i] = d.Seconds()
		}
		ideal := diamondIdeal(p, opts.stepLatency).Seconds()
		med := median(secs)
		rows = append(rows, diamondRow{Parallel: p, Seconds: secs, Median: med, Min: slices.Min(secs), Max: slices.Max(secs), Ideal: ideal, Ratio: med / ideal})
	}
	return rows, nil
}

// diamondRun runs the route once on a fresh thread through runs/stream and
// returns its wall time, from sending the request to the done event. It
// fails unless every step of the diamond started and finished completed.
func diamondRun(ctx context.Context, client *http.Client, base, route, thread string) (time.Duration, error) {
	body, _ := json.Marshal(map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": "Check the facts in two halves and combine them."}}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/threads/"+thread+"/runs/stream", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return 0, fmt.Errorf("runs/stream: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	started, finished := map[string]bool{}, map[string]string{}
	rd := stream.NewReader(resp.Body)
	for {
		e, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, errors.New("the stream ended before its done event")
			}
			return 0, err
		}
		var ev struct {
			Step   string `json:"step"`
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		switch e.Type {
		case planfirst.EventStepStarted:
			_ = json.Unmarshal(e.Data, &ev)
			started[ev.Step] = true
		case planfirst.EventStepFinished:
			_ = json.Unmarshal(e.Data, &ev)
			finished[ev.Step] = ev.Status + ev.Error
		case stream.TypeDone:
			d := time.Since(t0)
			var done struct {
				Output struct {
					Error string `json:"error"`
				} `json:"output"`
			}
			_ = json.Unmarshal(e.Data, &done)
			if done.Output.Error != "" {
				return 0, fmt.Errorf("the run failed: %s", done.Output.Error)
			}
			for _, id := range []string{"A", "B", "C", "D"} {
				if !started[id] || finished[id] != string(planfirst.Completed) {
					return 0, fmt.Errorf("step %s did not run to completion (step_started %v, step_finished %q): not a plan-first diamond run", id, started[id], finished[id])
				}
			}
			return d, nil
		}
	}
}
