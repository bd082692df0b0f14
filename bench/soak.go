package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// soakResult is what one soak found. Every count of problems must be zero
// for the soak to pass.
type soakResult struct {
	URL             string `json:"url"`
	Route           string `json:"route"`
	Rounds          int    `json:"rounds"`
	Runs            int    `json:"runs"`
	Subscribers     int    `json:"subscribers"`
	PeakSubscribers int64  `json:"peak_subscribers"`
	PeakRuns        int64  `json:"peak_runs"`
	Events          int64  `json:"events"`
	// Lost counts subscribers whose ids were not 1..N without a gap, or
	// that did not end with done; Mismatched counts subscribers whose
	// events differ from the run's first stream; PlanMismatch counts runs
	// whose last plan_update differs from the final state's todos; Failed
	// counts runs that ended with an error or could not be checked.
	Lost         int      `json:"lost"`
	Mismatched   int      `json:"mismatched"`
	PlanMismatch int      `json:"plan_mismatch"`
	Failed       int      `json:"failed"`
	Problems     []string `json:"problems,omitempty"` // the first few, in words
	Seconds      float64  `json:"seconds"`
	// Server process figures, when the tool started the server (Linux).
	RSSBeforeMiB float64 `json:"rss_before_mib,omitempty"`
	RSSAfterMiB  float64 `json:"rss_after_mib,omitempty"`
	// RSSRoundsMiB is the RSS after each round: a leak keeps it climbing.
	RSSRoundsMiB  []float64 `json:"rss_rounds_mib,omitempty"`
	SocketsBefore int       `json:"sockets_before,omitempty"`
	SocketsAfter  int       `json:"sockets_after,omitempty"`
	mu            sync.Mutex
}

// ok reports whether the soak found no problem.
func (r *soakResult) ok() bool {
	return r.Lost+r.Mismatched+r.PlanMismatch+r.Failed == 0 && len(r.Problems) == 0
}

// problem records a problem in words, keeping the first ten.
func (r *soakResult) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.Problems) < 10 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

func (r *soakResult) count(field *int) {
	r.mu.Lock()
	*field++
	r.mu.Unlock()
}

// soaker drives one server.
type soaker struct {
	opts options
	http *http.Client
	url  string
	tag  string
	res  *soakResult
	subs atomic.Int64 // subscribers connected now
	runs atomic.Int64 // runs whose first stream is open now
}

// runSoak runs the soak against opts.url, or against a dawn server it
// starts on the workload app with the offline model, and returns what it
// found.
func runSoak(ctx context.Context, opts options) (*soakResult, error) {
	if opts.url != "" {
		return soakURL(ctx, opts, opts.url, 0)
	}
	repo, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "dawnsoak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := opts.dawn
	if bin == "" {
		if bin, err = buildDawn(ctx, repo, tmp); err != nil {
			return nil, err
		}
	}
	app := tmp + "/app"
	if err := writeSoakApp(app, opts.soakPlan); err != nil {
		return nil, err
	}
	srv, err := start(ctx, "dawn start", bin, []string{"start", "--app", app, "--host", "127.0.0.1", "--port", "0"}, nil, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer srv.stop(15 * time.Second)
	if err := waitHealthy(ctx, srv.url+"/healthz", 10*time.Second); err != nil {
		return nil, err
	}
	return soakURL(ctx, opts, srv.url, srv.pid())
}

// writeSoakApp writes the workload's route, support/[tenant], with a plan
// of items items on the offline model: it spends one writeTodos turn per
// item, so runs last long enough for subscribers to pile up.
func writeSoakApp(dir string, items int) error {
	var plan strings.Builder
	plan.WriteString("# Soak checklist\n\n")
	for i := 1; i <= items; i++ {
		fmt.Fprintf(&plan, "- [ ] Soak step %d\n", i)
	}
	return writeFiles(dir, map[string]string{
		"support/[tenant]/agent.md": fmt.Sprintf("---\ndescription: Works through a long plan.\nmax_turns: %d\n---\nWork through the plan.\n", items+5),
		"support/[tenant]/plan.md":  plan.String(),
	})
}

// soakURL warms the server up, measures its process (when pid > 0), runs
// the rounds and measures again once the connections are gone.
func soakURL(ctx context.Context, opts options, url string, pid int) (*soakResult, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: opts.subscribers + 8, DisableCompression: true}
	defer tr.CloseIdleConnections()
	s := &soaker{
		opts: opts, url: strings.TrimRight(url, "/"), tag: fmt.Sprintf("soak-%x", time.Now().UnixNano()),
		http: &http.Client{Transport: tr},
		res:  &soakResult{URL: url, Route: opts.route, Rounds: opts.soakRounds},
	}
	if pid > 0 {
		// Warm the server's pools up before its baseline is measured.
		if err := s.round(ctx, -1, min(4, opts.soakRuns), min(4, opts.soakRuns)); err != nil {
			return nil, fmt.Errorf("warm-up: %w", err)
		}
		s.res = &soakResult{URL: url, Route: opts.route, Rounds: opts.soakRounds}
		tr.CloseIdleConnections()
		time.Sleep(100 * time.Millisecond)
		s.res.RSSBeforeMiB, s.res.SocketsBefore = processFigures(pid)
	}
	start := time.Now()
	for round := range opts.soakRounds {
		if err := s.round(ctx, round, opts.soakRuns, opts.subscribers); err != nil {
			return s.res, err
		}
		if pid > 0 {
			rss, _ := processFigures(pid)
			s.res.RSSRoundsMiB = append(s.res.RSSRoundsMiB, rss)
		}
	}
	s.res.Seconds = time.Since(start).Seconds()
	tr.CloseIdleConnections()
	if pid > 0 {
		// The server closes a connection when it sees the client's end;
		// give it a moment before counting its descriptors.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			s.res.RSSAfterMiB, s.res.SocketsAfter = processFigures(pid)
			if s.res.SocketsAfter <= s.res.SocketsBefore || time.Now().After(deadline) {
				break
			}
		}
		if s.res.SocketsAfter > s.res.SocketsBefore+2 {
			s.res.problem("the server holds %d sockets after the soak, %d before: connections leak", s.res.SocketsAfter, s.res.SocketsBefore)
		}
	}
	return s.res, nil
}

// processFigures returns pid's RSS in MiB and how many sockets it holds
// open (the listener and the connections; its SQLite files are not
// counted, since the store's read pool opens more under load), or zeros
// where /proc cannot tell.
func processFigures(pid int) (float64, int) {
	var rss float64
	if b, err := processRSS(pid); err == nil {
		rss = float64(b) / (1 << 20)
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, _ := os.ReadDir(dir)
	sockets := 0
	for _, fd := range fds {
		if target, err := os.Readlink(dir + "/" + fd.Name()); err == nil && strings.HasPrefix(target, "socket:") {
			sockets++
		}
	}
	return rss, sockets
}

// subscriber is one SSE connection to a run's stream.
type subscriber struct {
	events []stream.Event
	err    error
}

// round starts runs on fresh threads at once, attaches extra subscribers
// to each run's stream (subscribers in all, counting the runs' own), waits
// for every stream to end and checks them. Round -1 is the warm-up.
func (s *soaker) round(ctx context.Context, round, runs, subscribers int) error {
	extra := subscribers - runs
	var wg sync.WaitGroup
	for i := range runs {
		n := extra / runs
		if i < extra%runs {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(ctx, fmt.Sprintf("%s-r%d-%d", s.tag, round, i), n)
		}()
	}
	wg.Wait()
	if round >= 0 {
		s.res.Runs += runs
		s.res.Subscribers += subscribers
	}
	return ctx.Err()
}

// run starts one run with runs/stream, attaches extra subscribers once its
// id is known, and checks every subscriber's events.
func (s *soaker) run(ctx context.Context, thread string, extra int) {
	body, _ := json.Marshal(map[string]any{
		"route": s.opts.route,
		"input": map[string]any{"messages": []map[string]string{{"role": "user", "content": userMessage}}},
	})
	resp, err := s.open(ctx, http.MethodPost, "/threads/"+thread+"/runs/stream", body)
	if err != nil {
		s.res.count(&s.res.Failed)
		s.res.problem("thread %s: runs/stream: %v", thread, err)
		return
	}
	runID := resp.Header.Get("Dawn-Run-Id")
	raise(&s.res.PeakRuns, s.runs.Add(1))
	subs := make([]subscriber, extra+1)
	var wg sync.WaitGroup
	for i := 1; i <= extra; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.open(ctx, http.MethodGet, "/threads/"+thread+"/runs/"+runID+"/stream?after=0", nil)
			if err != nil {
				subs[i].err = err
				return
			}
			subs[i] = s.read(r)
		}()
	}
	subs[0] = s.read(resp)
	s.runs.Add(-1)
	wg.Wait()
	s.check(ctx, thread, runID, subs)
}

// open sends a request and returns the response if it is a 200 stream,
// counting it as a connected subscriber.
func (s *soaker) open(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	raise(&s.res.PeakSubscribers, s.subs.Add(1))
	return resp, nil
}

// raise sets *peak to v if v is larger.
func raise(peak *int64, v int64) {
	for {
		old := atomic.LoadInt64(peak)
		if v <= old || atomic.CompareAndSwapInt64(peak, old, v) {
			return
		}
	}
}

// read reads a stream to its end.
func (s *soaker) read(resp *http.Response) subscriber {
	defer resp.Body.Close()
	defer s.subs.Add(-1)
	r := stream.NewReader(resp.Body)
	var sub subscriber
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			sub.err = err
			break
		}
		sub.events = append(sub.events, e)
	}
	atomic.AddInt64(&s.res.Events, int64(len(sub.events)))
	return sub
}

// check verifies one run: every subscriber saw ids 1..N in order ending
// with done, all saw the same events, the run succeeded, and its last
// plan_update equals the thread's final todos.
func (s *soaker) check(ctx context.Context, thread, runID string, subs []subscriber) {
	first := subs[0].events
	for i, sub := range subs {
		if sub.err != nil {
			s.res.count(&s.res.Lost)
			s.res.problem("thread %s subscriber %d: %v after %d events", thread, i, sub.err, len(sub.events))
			continue
		}
		if !consecutive(sub.events) {
			s.res.count(&s.res.Lost)
			s.res.problem("thread %s subscriber %d: ids %v are not 1..N ending with done", thread, i, ids(sub.events))
			continue
		}
		if i > 0 && !sameEvents(first, sub.events) {
			s.res.count(&s.res.Mismatched)
			s.res.problem("thread %s subscriber %d: its %d events differ from the run's stream (%d events)", thread, i, len(sub.events), len(first))
		}
	}
	if len(first) == 0 {
		return
	}
	var done struct {
		Output struct {
			Error string          `json:"error"`
			Todos json.RawMessage `json:"todos"`
		} `json:"output"`
	}
	if err := json.Unmarshal(first[len(first)-1].Data, &done); err != nil || done.Output.Error != "" {
		s.res.count(&s.res.Failed)
		s.res.problem("thread %s run %s ended with %s", thread, runID, first[len(first)-1].Data)
		return
	}
	var lastPlan json.RawMessage
	for _, e := range first {
		if e.Type == "plan_update" {
			var p struct {
				Todos json.RawMessage `json:"todos"`
			}
			_ = json.Unmarshal(e.Data, &p)
			lastPlan = p.Todos
		}
	}
	state, err := s.stateTodos(ctx, thread)
	if err != nil {
		s.res.count(&s.res.Failed)
		s.res.problem("thread %s: reading the state: %v", thread, err)
		return
	}
	if lastPlan == nil || !sameJSON(lastPlan, state) || !sameJSON(lastPlan, done.Output.Todos) {
		s.res.count(&s.res.PlanMismatch)
		s.res.problem("thread %s: last plan_update %s, done todos %s, state todos %s", thread, lastPlan, done.Output.Todos, state)
	}
}

// stateTodos reads the thread's todos from GET /threads/:id/state.
func (s *soaker) stateTodos(ctx context.Context, thread string) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/threads/"+thread+"/state", nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var st struct {
		Values struct {
			Todos json.RawMessage `json:"todos"`
		} `json:"values"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, err
	}
	return st.Values.Todos, nil
}

// consecutive reports whether events have ids 1..N and end with done.
func consecutive(events []stream.Event) bool {
	for i, e := range events {
		if e.ID != int64(i+1) {
			return false
		}
	}
	return len(events) > 0 && events[len(events)-1].Type == stream.TypeDone
}

func ids(events []stream.Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func sameEvents(a, b []stream.Event) bool {
	return slices.EqualFunc(a, b, func(x, y stream.Event) bool {
		return x.ID == y.ID && x.Type == y.Type && string(x.Data) == string(y.Data)
	})
}

// sameJSON reports whether a and b decode to equal values.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// writeSoak prints the soak's result as a short table.
func writeSoak(w io.Writer, r *soakResult) {
	verdict := "PASS"
	if !r.ok() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "soak of %s on %s: %s\n", r.Route, r.URL, verdict)
	fmt.Fprintf(w, "  rounds %d, runs %d, subscribers %d (peak %d connected at once, peak %d runs streaming), events read %d, %.1fs\n",
		r.Rounds, r.Runs, r.Subscribers, r.PeakSubscribers, r.PeakRuns, r.Events, r.Seconds)
	fmt.Fprintf(w, "  lost or reordered %d, mismatched across subscribers %d, plan_update vs final state %d, failed runs %d\n",
		r.Lost, r.Mismatched, r.PlanMismatch, r.Failed)
	if r.RSSBeforeMiB > 0 {
		fmt.Fprintf(w, "  server RSS %.1f MiB before, %.1f MiB after (after each round: %s); sockets %d before, %d after\n",
			r.RSSBeforeMiB, r.RSSAfterMiB, mib(r.RSSRoundsMiB), r.SocketsBefore, r.SocketsAfter)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  problem: %s\n", p)
	}
}

func mib(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, ", ")
}
