package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The wire comparison (--wire-diff) starts two dawn binaries, each on its
// own copy of one fixture app served by deterministic models (the offline
// model, and a script:FILE model for the approval route), sends both the
// same fixed script of requests over every wire the server speaks, records
// each exchange, normalizes what legitimately differs from one server to
// the other (generated ids, timestamps, durations, ports), and compares the
// records wire by wire.

// wireApp is the fixture app: a planning route on the offline model, a
// harness-owned plan on the offline model, and a route whose writeTodos
// needs approval, on a scripted model.
var wireApp = map[string]string{
	"dawn.yaml": "store: .dawn/dawn.db\n",
	"support/[tenant]/agent.md": "---\ndescription: Answers a tenant's support questions.\n---\n" +
		"You are the support agent for the tenant in the route. Be brief.\n",
	"support/[tenant]/plan.md": planMD,
	"onboard/agent.md":         "---\ndescription: Onboards a new customer.\n---\nYou onboard customers.\n",
	"onboard/plan.md": "---\nenforce: true\ngoal: Get the new customer to a working login\n---\n" +
		"- [ ] Create the account\n- [ ] Send the welcome email\n",
	"approve/agent.md": "---\nmodel: script:approve.yaml\ndescription: Plans only with a person's approval.\n" +
		"approve: [writeTodos]\n---\nYou plan refunds.\n",
	"approve/plan.md": "- [ ] Find the order\n- [ ] Refund it\n",
	"approve.yaml": "turns:\n" +
		"  - when: {tool: writeTodos}\n    text: The refund is planned.\n" +
		"  - text: Let me plan that.\n    tool_calls:\n" +
		"      - {name: writeTodos, args: {todos: [{content: Find the order, status: in_progress}, {content: Refund it, status: pending}]}}\n",
}

// wireDiffMain runs --wire-diff and returns the exit code: 0 when every
// wire answered the same, 1 on a difference, 2 when it could not compare.
func wireDiffMain(ctx context.Context, o options) int {
	tmp, err := os.MkdirTemp("", "dawn-wirediff-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --wire-diff:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	binA := o.dawn
	if binA == "" {
		repo, err := repoRoot()
		if err == nil {
			binA, err = buildDawn(ctx, repo, tmp)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench --wire-diff:", err)
			return 2
		}
	}
	recs, err := recordBoth(ctx, tmp, binA, o.dawn2)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --wire-diff:", err)
		return 2
	}
	if o.wireOut != "" {
		if err := writeRecordings(o.wireOut, recs); err != nil {
			fmt.Fprintln(os.Stderr, "bench --wire-diff:", err)
			return 2
		}
	}
	fmt.Printf("A = %s\nB = %s\n\n", binA, o.dawn2)
	if writeWireVerdicts(os.Stdout, recs[0], recs[1]) > 0 {
		return 1
	}
	return 0
}

// recordBoth starts binA and binB, each on a fresh copy of the fixture app
// under dir, one after the other, and records the script against each.
func recordBoth(ctx context.Context, dir, binA, binB string) ([2][]exchange, error) {
	var recs [2][]exchange
	for i, bin := range []string{binA, binB} {
		app := filepath.Join(dir, fmt.Sprintf("app-%c", 'a'+i))
		if err := writeFiles(app, wireApp); err != nil {
			return recs, err
		}
		srv, err := startDawn(ctx, bin, app, nil)
		if err != nil {
			return recs, err
		}
		recs[i], err = recordWires(ctx, srv.url, app)
		srv.stop(10 * time.Second)
		if err != nil {
			return recs, fmt.Errorf("%s: %w", bin, err)
		}
	}
	return recs, nil
}

// recordWires sends the whole script to the server at base and returns
// every exchange, normalized. A wire whose script cannot go on (a step
// whose answer a later one needs came back wrong, or the server stopped
// answering) ends with a stopped exchange saying why, and the next wire's
// script starts: a server that answers differently is a difference to
// show, not a reason to stop comparing. Only a cancelled ctx is an error.
func recordWires(ctx context.Context, base, app string) ([]exchange, error) {
	s := &wireSession{
		base: base,
		http: &http.Client{Timeout: time.Minute},
		norm: newNormalizer(base, app),
	}
	for _, w := range wireScript {
		s.wire = w.name
		if err := w.run(ctx, s); err != nil {
			if ctx.Err() != nil {
				return s.out, ctx.Err()
			}
			s.out = append(s.out, exchange{wire: w.name, request: "(the script stopped)", status: stopped, body: s.norm.text(err.Error())})
		}
	}
	return s.out, nil
}

// stopped is the status of the exchange that ends a wire's script early.
const stopped = -1

// writeRecordings writes the two recordings, rendered, to dir/a.txt and
// dir/b.txt.
func writeRecordings(dir string, recs [2][]exchange) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, rec := range recs {
		var b strings.Builder
		for n, e := range rec {
			fmt.Fprintf(&b, "### %s %d\n%s\n\n", e.wire, n+1, strings.Join(e.render(true), "\n"))
		}
		if err := os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".txt"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// exchange is one recorded request and its response, normalized.
type exchange struct {
	wire, request string // request: "METHOD /path" and its body
	status        int
	header        []string // "Name: value", sorted; see keptHeader
	body          string
	raw           string      // the whole response body as received
	rawHeader     http.Header // the response's headers as received
}

// wireSession is one server's run of the script.
type wireSession struct {
	base string
	http *http.Client
	norm *normalizer
	wire string
	out  []exchange
}

// do sends a request with an optional JSON body and extra headers
// ("Name: value"), records the exchange and returns it. A transport error
// ends the script; any status is recorded as it is.
func (s *wireSession) do(ctx context.Context, method, path, body string, headers ...string) (exchange, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return exchange{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return exchange{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return exchange{}, fmt.Errorf("%s %s: reading the response: %w", method, path, err)
	}
	ex := exchange{
		wire:      s.wire,
		request:   s.norm.text(requestText(method, path, body, headers)),
		status:    resp.StatusCode,
		header:    s.norm.headers(resp),
		body:      s.norm.body(resp.Header.Get("Content-Type"), data),
		raw:       string(data),
		rawHeader: resp.Header,
	}
	s.out = append(s.out, ex)
	return ex, nil
}

// requestText is a request as recorded: the method and path, the headers
// the script set, the body.
func requestText(method, path, body string, headers []string) string {
	lines := append([]string{method + " " + path}, headers...)
	if body != "" {
		lines = append(lines, body)
	}
	return strings.Join(lines, "\n")
}

// need is do that also fails the script unless the status is want: the
// steps after it depend on its answer.
func (s *wireSession) need(ctx context.Context, want int, method, path, body string, headers ...string) (exchange, error) {
	ex, err := s.do(ctx, method, path, body, headers...)
	if err == nil && ex.status != want {
		err = fmt.Errorf("%s %s answered %d, not %d: %s", method, path, ex.status, want, shorten(ex.raw, 300))
	}
	return ex, err
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
