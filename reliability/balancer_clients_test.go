//go:build unix

package reliability

import (
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// requireNodeEnv makes missing Node.js test tools fail the test instead of
// skipping it. .ci/run sets it.
const requireNodeEnv = "DAWN_REQUIRE_NODE"

// TestBehindHAProxyClients drives the balancer of TestBehindHAProxy (three
// `dawn start` replicas on one Postgres database behind HAProxy, round
// robin, the slow model) with the client libraries users have, under
// `node --test`:
//   - tools/langgraph/balancer.test.mjs: the LangGraph SDK's Client creates
//     threads, runs runs.wait and runs.stream (values, messages-tuple), and
//     drops a stream after its first part and rejoins it with joinStream,
//     which round robin sends to another replica, to the run's end;
//   - tools/clients/balancer.test.mjs: AG-UI's HttpAgent runs three threads
//     at once, each continued by a second run on another replica.
//
// Every run completes, and HAProxy's own counters show no 5xx answered and
// every replica serving.
func TestBehindHAProxyClients(t *testing.T) {
	lg := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), requireNodeEnv)
	agui := nodetool.Package(t, "clients", filepath.Join("@ag-ui", "client", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(requireNodeEnv) == "1" {
			t.Fatalf("node is not on PATH: %v", err)
		}
		t.Skipf("node is not on PATH: %v", err)
	}
	b := startBalancer(t)
	before := b.stats()

	for _, dir := range []string{lg, agui} {
		passed := b.runNode(node, dir, "balancer.test.mjs")
		t.Logf("node --test tools/%s/balancer.test.mjs through the balancer: %d tests passed", filepath.Base(dir), passed)
	}

	after := b.stats()
	requests := after["api/FRONTEND"].requests - before["api/FRONTEND"].requests
	fivexx := after["api/FRONTEND"].fivexx - before["api/FRONTEND"].fivexx
	t.Logf("behind HAProxy, client libraries: %d requests, %d answered 5xx; per replica: r0 %d, r1 %d, r2 %d", requests, fivexx,
		after["dawn/r0"].requests-before["dawn/r0"].requests, after["dawn/r1"].requests-before["dawn/r1"].requests, after["dawn/r2"].requests-before["dawn/r2"].requests)
	if fivexx != 0 {
		t.Errorf("HAProxy answered %d of the clients' %d requests with a 5xx, want none\nhaproxy's output:\n%s", fivexx, requests, b.logs)
	}
	for i := range b.reps {
		name := "dawn/r" + strconv.Itoa(i)
		if after[name].requests == before[name].requests {
			t.Errorf("replica r%d served none of the clients' requests: the balancer did not spread them", i)
		}
	}
}

// runNode runs `node --test file` in dir against the balancer and returns
// how many tests passed; it fails the test when any failed, none passed, or
// any was skipped.
func (b *balancer) runNode(node, dir, file string) int {
	t := b.t
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-timeout=60000", file)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_BALANCER_URL="+b.client.base, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test tools/%s/%s through the balancer: %v\n%s\nhaproxy's output:\n%s", filepath.Base(dir), file, err, out, b.logs)
	}
	count := func(what string) int {
		m := regexp.MustCompile(`(?m)^ℹ ` + what + ` (\d+)`).FindSubmatch(out)
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	if pass, skipped := count("pass"), count("skipped"); pass <= 0 || skipped != 0 {
		t.Fatalf("node --test tools/%s/%s: %d passed, %d skipped, want all run and passing\n%s", filepath.Base(dir), file, pass, skipped, out)
	}
	return count("pass")
}

// proxyStats are one line of HAProxy's "show stat": the HTTP requests a
// frontend received or a server was sent, and the 5xx answers among them.
type proxyStats struct{ requests, fivexx int }

// stats reads HAProxy's counters, keyed by "proxy/server" (the frontend's
// line is "api/FRONTEND").
func (b *balancer) stats() map[string]proxyStats {
	t := b.t
	out, err := b.admin("show stat")
	if err != nil {
		t.Fatalf("HAProxy's show stat: %v", err)
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(out, "# "))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("HAProxy's show stat is not CSV: %v\n%s", err, out)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	num := func(row []string, name string) int {
		n, _ := strconv.Atoi(row[col[name]])
		return n
	}
	stats := map[string]proxyStats{}
	for _, row := range rows[1:] {
		// A frontend counts the requests it received in req_tot, a server
		// those it was sent in stot.
		requests := num(row, "stot")
		if row[1] == "FRONTEND" {
			requests = num(row, "req_tot")
		}
		stats[row[0]+"/"+row[1]] = proxyStats{requests: requests, fivexx: num(row, "hrsp_5xx")}
	}
	return stats
}
