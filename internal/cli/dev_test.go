package cli_test

import (
	"context"
	"encoding/json"
	"github.com/dawn-go/dawn/markers"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/watch"
	"github.com/dawn-go/dawn/router/routertest"
)

const supportPlan = `# Support checklist

- [ ] Understand the customer request
- [ ] Check account context
- [ ] Decide whether to answer or escalate
- [ ] Write the final response
`

func supportAgent(description string) string {
	return "---\ndescription: " + description + "\n---\nYou are the support agent. Be brief.\n"
}

// TestDevReloadsWithoutRestart edits a served app and checks that every edit
// lands in the same process on the same port: a plan.md edit changes the
// next run's seed, a new route folder becomes a route, a broken agent.md
// keeps the last good version serving and prints the error with the file,
// and fixing it recovers.
func TestDevReloadsWithoutRestart(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"support/[tenant]/agent.md": supportAgent("Support v1"),
		"support/[tenant]/plan.md":  supportPlan,
	})
	s := startDawn(t, offlineEnv(), 30*time.Second, "dev", "--app", dir)
	t.Logf("dev cold start: ready line after %s", s.ready.Sub(s.started).Round(time.Millisecond))
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		t.Fatalf("dev serves at %s, want http://127.0.0.1:PORT", s.url)
	}
	pid := s.cmd.Process.Pid

	if todos := runTodos(t, s.url, "/support/acme"); len(todos) != 4 || todos[0].Content != "Understand the customer request" {
		t.Fatalf("first run's todos = %+v, want the 4 seed items", todos)
	}

	// A fifth plan item: the next run starts from it.
	writeFiles(t, dir, map[string]string{"support/[tenant]/plan.md": supportPlan + "- [ ] Ask for feedback\n"})
	took := waitFor(t, 5*time.Second, "a run with the 5-item seed", func() bool {
		todos := runTodos(t, s.url, "/support/acme")
		return len(todos) == 5 && todos[4].Content == "Ask for feedback"
	})
	t.Logf("hot reload: plan.md write to a run that sees it: %s", took.Round(time.Millisecond))

	// Measure write → /routes shows it, a few times, on a cheap endpoint.
	var lat []time.Duration
	for i := range 5 {
		items := strings.Repeat("- [ ] extra\n", i+2)
		start := time.Now()
		writeFiles(t, dir, map[string]string{"support/[tenant]/plan.md": supportPlan + items})
		waitFor(t, 5*time.Second, "GET /routes shows the edit", func() bool {
			return len(routes(t, s.url)["/support/[tenant]"].Seed) == 6+i
		})
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	t.Logf("hot reload: plan.md write to /routes showing it: median %s (min %s, max %s, 5 edits)", lat[2].Round(time.Millisecond), lat[0].Round(time.Millisecond), lat[4].Round(time.Millisecond))
	writeFiles(t, dir, map[string]string{"support/[tenant]/plan.md": supportPlan + "- [ ] Ask for feedback\n"})

	// A new route folder.
	writeFiles(t, dir, map[string]string{"new/agent.md": "---\ndescription: Brand new\n---\nYou are new.\n"})
	waitFor(t, 5*time.Second, "GET /routes lists /new", func() bool {
		_, ok := routes(t, s.url)["/new"]
		return ok
	})
	if values := runValues(t, s.url, "/new"); len(values["messages"]) == 0 {
		t.Errorf("run /new returned no messages: %v", values)
	}

	// A broken agent.md: the last good version keeps serving.
	agent := filepath.Join(dir, "support", "[tenant]", "agent.md")
	writeFiles(t, dir, map[string]string{"support/[tenant]/agent.md": "---\ndescription: Support v2\nbogus_key: 1\n---\nBroken.\n"})
	s.waitOutput(t, 5*time.Second, "still serving the last good version", agent+":3", "bogus_key")
	if todos := runTodos(t, s.url, "/support/acme"); len(todos) != 5 {
		t.Errorf("while agent.md is broken, the run's todos = %+v, want the last good 5-item seed", todos)
	}
	if got := routes(t, s.url)["/support/[tenant]"]; got.Description != "Support v1" || got.Error != "" {
		t.Errorf("while agent.md is broken, /routes shows %+v, want the last good version", got)
	}

	// Fixed: the new version serves.
	writeFiles(t, dir, map[string]string{"support/[tenant]/agent.md": supportAgent("Support v2")})
	waitFor(t, 5*time.Second, "GET /routes shows the fixed description", func() bool {
		return routes(t, s.url)["/support/[tenant]"].Description == "Support v2"
	})
	if todos := runTodos(t, s.url, "/support/acme"); len(todos) != 5 {
		t.Errorf("after the fix, the run's todos = %+v, want 5", todos)
	}

	// A removed route goes away.
	if err := os.RemoveAll(filepath.Join(dir, "new")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "GET /routes drops /new", func() bool {
		_, ok := routes(t, s.url)["/new"]
		return !ok
	})

	if !s.alive() || s.cmd.Process.Pid != pid {
		t.Fatalf("the dev process %d is gone:\n%s", pid, s.out)
	}
	if n := strings.Count(s.out.String(), "Dawn dev ready at "); n != 1 {
		t.Errorf("the ready line was printed %d times, want once:\n%s", n, s.out)
	}
	var health map[string]string
	getJSON(t, s.url+"/healthz", &health) // the same port still answers
}

// TestDevRebuildsGoApp runs an app with Go tools under the stock binary:
// dev builds the app's main package and proxies to it; a .go edit rebuilds
// and restarts the app behind the same port and process; a build error
// keeps the last good build serving and prints the compiler's message.
func TestDevRebuildsGoApp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go code; skipped with -short")
	}
	mod := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(repoRoot(t), "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	appDir := filepath.Join(mod, "app")
	writeFiles(t, mod, map[string]string{
		"go.mod":              "module example.com/devapp\n\ngo 1.26.0\n\nrequire github.com/dawn-go/dawn v0.0.0\n\nreplace github.com/dawn-go/dawn => " + filepath.ToSlash(repoRoot(t)) + "\n",
		"go.sum":              string(sum),
		"app/main.go":         goApp("ping"),
		"app/helper/agent.md": "---\ndescription: Helps\ntools: [ping]\n---\nUse the tool.\n",
	})
	// Module downloads stay allowed: on a fresh machine the app's build
	// fetches what the repository's own build has not needed yet.
	env := offlineEnv("GOFLAGS=-mod=mod", "GOWORK=off")
	s := startDawn(t, env, 3*time.Minute, "dev", "--app", appDir)
	t.Logf("dev (Go app) cold start, build included: ready line after %s", s.ready.Sub(s.started).Round(time.Millisecond))
	pid := s.cmd.Process.Pid
	if got := routes(t, s.url)["/helper"]; !slices.Contains(got.Tools, "ping") {
		t.Fatalf("/helper = %+v, want the app's tool ping", got)
	}

	// Rename the tool: the route lists the new name first, then the code.
	writeFiles(t, appDir, map[string]string{"helper/agent.md": "---\ndescription: Helps\ntools: [pong]\n---\nUse the tool.\n"})
	start := time.Now()
	writeFiles(t, appDir, map[string]string{"main.go": goApp("pong")})
	waitFor(t, 3*time.Minute, "GET /routes shows the tool pong", func() bool {
		return slices.Contains(routes(t, s.url)["/helper"].Tools, "pong")
	})
	t.Logf("Go rebuild: main.go write to /routes showing the new tool: %s", time.Since(start).Round(time.Millisecond))
	if !s.alive() || s.cmd.Process.Pid != pid {
		t.Fatalf("the dev process is gone:\n%s", s.out)
	}
	if values := runValues(t, s.url, "/helper"); len(values["messages"]) == 0 {
		t.Errorf("run /helper through the proxy returned no messages: %v", values)
	}

	// A compile error: the last good build keeps serving.
	writeFiles(t, appDir, map[string]string{"main.go": goApp("pong") + "\nfunc broken() { undefinedThing() }\n"})
	s.waitOutput(t, 3*time.Minute, "does not build; still serving the last good build", "main.go", "undefinedThing")
	if got := routes(t, s.url)["/helper"]; !slices.Contains(got.Tools, "pong") {
		t.Errorf("after a failed build /helper = %+v, want the last good build's tool pong", got)
	}
	if n := strings.Count(s.out.String(), "Dawn dev ready at "); n != 1 || strings.Contains(s.out.String(), "Dawn dev child ready") {
		t.Errorf("want exactly one ready line, the parent's:\n%s", s.out)
	}
	if !s.alive() || s.cmd.Process.Pid != pid || !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		t.Fatalf("the dev process is gone:\n%s", s.out)
	}

	s.stop(t)
	if _, err := os.Stat(filepath.Join(appDir, ".dawn", "bin")); !os.IsNotExist(err) {
		t.Errorf("after dev stopped, .dawn/bin is still there (err %v): the app's builds were not cleaned up", err)
	}
}

// goApp is an app's main.go registering one shared tool.
func goApp(tool string) string {
	return `package main

import (
	"context"

	"github.com/dawn-go/dawn"
)

type pingInput struct {
	Text string ` + "`json:\"text\"`" + `
}

func main() {
	dawn.Main(dawn.Tool("` + tool + `", "Answers with the text.", func(ctx context.Context, in pingInput) (string, error) {
		return in.Text, nil
	}))
}
`
}

// TestStartReadyTime measures the stock binary's cold start with dawn start
// --port 0: from exec to the ready log line and to /healthz answering, for
// a small app and a 1,000-route app.
func TestStartReadyTime(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement; skipped with -short")
	}
	small := t.TempDir()
	writeFiles(t, small, map[string]string{
		"support/[tenant]/agent.md": supportAgent("Support"),
		"support/[tenant]/plan.md":  supportPlan,
	})
	big := t.TempDir()
	if err := routertest.GenerateApp(big, 1000, true); err != nil {
		t.Fatal(err)
	}
	dawnBinary(t) // build outside the measurement
	for _, tc := range []struct {
		name string
		dir  string
	}{{"1 route", small}, {"1000 routes", big}} {
		var times []time.Duration
		for range 3 {
			s := startDawn(t, offlineEnv(), time.Minute, "start", "--app", tc.dir, "--host", "127.0.0.1", "--port", "0")
			var health map[string]string
			getJSON(t, s.url+"/healthz", &health)
			times = append(times, time.Since(s.started))
			if tc.dir == big {
				if n := len(routes(t, s.url)); n != 1000 {
					t.Errorf("the big app serves %d routes, want 1000", n)
				}
			}
			s.stop(t)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		t.Logf("cold start (%s): exec to /healthz: median %s (min %s, max %s)", tc.name, times[1].Round(time.Millisecond), times[0].Round(time.Millisecond), times[2].Round(time.Millisecond))
	}
}

// BenchmarkHotReload measures what dev does for a plan.md edit, in process:
// from the file write, through the watcher's debounce, to app.Load and
// runner.Manager.SetApp swapping the new snapshot in. It reports the median.
func BenchmarkHotReload(b *testing.B) {
	dir := b.TempDir()
	writeFiles(b, dir, map[string]string{
		"support/[tenant]/agent.md": supportAgent("Support"),
		"support/[tenant]/plan.md":  supportPlan,
	})
	if err := routertest.GenerateApp(filepath.Join(dir, "more"), 50, true); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.Load(ctx, dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	runs := runner.New(st, a, runner.Options{})
	type reload struct {
		seed int
		load time.Duration
	}
	swapped := make(chan reload, 10)
	go watch.Changes(ctx, dir, watch.Options{Debounce: 15 * time.Millisecond}, func(watch.Batch) {
		start := time.Now()
		next, err := app.Load(ctx, dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			b.Error(err)
			return
		}
		runs.SetApp(next)
		swapped <- reload{seedLen(runs.App()), time.Since(start)}
	})
	plan := filepath.Join(dir, "support", "[tenant]", "plan.md")
	edit := func(items int) {
		if err := os.WriteFile(plan, []byte(supportPlan+strings.Repeat("- [ ] more\n", items-4)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// The watcher has no ready signal: edit until a reload comes.
	for ready := false; !ready; {
		edit(4)
		select {
		case <-swapped:
			ready = true
		case <-time.After(200 * time.Millisecond):
		}
	}
	time.Sleep(100 * time.Millisecond)
	for len(swapped) > 0 {
		<-swapped
	}

	b.ReportAllocs()
	var lat, loads []time.Duration
	for i := 0; b.Loop(); i++ {
		want := 5 + i%5
		start := time.Now()
		edit(want)
		for got := -1; got != want; {
			select {
			case r := <-swapped:
				got = r.seed
				loads = append(loads, r.load)
			case <-time.After(10 * time.Second):
				b.Fatal("no reload within 10s")
			}
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	slices.Sort(loads)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms/reload-median")
	b.ReportMetric(float64(loads[len(loads)/2].Microseconds())/1000, "ms/load-median")
}

// seedLen is the number of seed todos of /support/[tenant] in a.
func seedLen(a *app.App) int {
	for _, r := range a.Describe(func(string) string { return "" }) {
		if r.ID == "/support/[tenant]" {
			data, _ := json.Marshal(r.Seed)
			var todos []todo
			_ = json.Unmarshal(data, &todos)
			return len(todos)
		}
	}
	return -1
}
