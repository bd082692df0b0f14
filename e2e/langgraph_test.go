package e2e

import (
	"context"
	"github.com/dawn-go/dawn/internal/docstext"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/embedtest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/nodetool"
	"github.com/tmc/langchaingo/llms"
)

// TestLangGraphClients runs the LangGraph SDK's own client and its React
// useStream hook (tools/langgraph/*.test.mjs, with `node --test`) against
// two real servers:
//   - DAWN_URL: the stock dawn binary serving examples/app on the offline
//     model, for every SDK call on runs that finish at once;
//   - DAWN_GATED_URL: the same kind of app in-process, whose offline model
//     holds a run whose user message says [hold:NAME] after its first tool
//     step until the test opens gate NAME (POST DAWN_GATE_URL/NAME), for
//     what needs a run in flight: rejoining, joining, cancelling,
//     multitask strategies;
//   - DAWN_MEANING_URL: the stock dawn binary serving an app whose Store
//     embeds items (store.index) with a scripted embedding model on
//     loopback, for searchItems with a query.
func TestLangGraphClients(t *testing.T) {
	dir := nodetool.Package(t, "langgraph", filepath.Join("@langchain", "langgraph-sdk", "package.json"), requireNodeEnv)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("npm installed tools/langgraph but node is not on PATH")
	}
	bin := buildDawn(t)
	url := startDawn(t, bin, filepath.Join(repoRoot(t), "examples", "app"), "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=",
		// Crons tick by the second here (a test-only setting), and the
		// scheduler looks every 100ms; threads whose ttl ran out are
		// swept every 100ms.
		"DAWN_CRON_SECONDS=1", "DAWN_CRON_INTERVAL=100ms", "DAWN_THREAD_SWEEP_INTERVAL=100ms")
	gated, gates := serveGated(t)
	meaning := startMeaningDawn(t, bin)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "--test-concurrency=1", "--test-timeout=60000")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_URL="+url, "DAWN_GATED_URL="+gated, "DAWN_GATE_URL="+gates, "DAWN_MEANING_URL="+meaning, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test in tools/langgraph:\n%s", out)
	if err != nil {
		t.Fatalf("the LangGraph client tests failed: %v (their output is above)", err)
	}
	// node --test passes when it finds no test files: make sure it ran them.
	if m := regexp.MustCompile(`(?m)^ℹ pass (\d+)`).FindSubmatch(out); m == nil || string(m[1]) == "0" {
		t.Fatalf("node --test ran no passing tests")
	}
}

// startMeaningDawn starts the dawn binary on an app whose Store embeds
// the text of items with a scripted embedding model (internal/embedtest)
// and returns its URL. The texts and vectors are those of
// tools/langgraph/meaning.test.mjs: "refund policy" means the item about
// sending goods back, and shares a word with the privacy notice only.
func startMeaningDawn(t *testing.T, bin string) string {
	t.Helper()
	srv := embedtest.New(t, map[string][]float32{
		"Customers can send purchases back within 30 days and get their money back": {0.9, 0.1, 0},
		"Our privacy policy explains which cookies we keep":                         {0, 0.1, 1},
		"refund policy": {1, 0, 0.1},
	})
	dir := t.TempDir()
	for name, text := range map[string]string{
		"dawn.yaml":     "store:\n  index:\n    embed: openai-compatible:scripted-embed\n    dims: 3\n    fields: [text]\n",
		"help/agent.md": "You answer questions.",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return startDawn(t, bin, dir, "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_MODEL=", "DAWN_API_KEY=",
		models.EnvCompatibleBaseURL+"="+srv.URL)
}

// exampleTools stand in for the example app's Go tools and verifier: the
// support route lists lookupAccount, which the offline model calls once
// after the plan; the release route's plan verifies with releaseChanges and
// namesItem.
var exampleTools = []dawn.Option{
	dawn.RouteTool("/support/[tenant]", "lookupAccount", "Look up a customer's account by email.",
		func(context.Context, struct {
			Email string `json:"email"`
		}) (string, error) {
			return "active", nil
		}),
	dawn.RouteTool("/release", "releaseChanges", "List the changes since a release tag.",
		func(context.Context, struct {
			Since string `json:"since"`
		}) ([]string, error) {
			return []string{"a change"}, nil
		}),
	dawn.Verifier("namesItem", func(context.Context, dawn.VerifyInput) (dawn.Verdict, error) { return dawn.Verdict{Pass: true}, nil }),
}

// serveGated serves examples/app in-process on a gated offline model and
// returns the API's URL and the URL under which POST /NAME opens gate NAME.
func serveGated(t *testing.T) (api, gates string) {
	t.Helper()
	g := &gatedModel{inner: models.NewOffline(), open: map[string]chan struct{}{}}
	h := apptest.New(t, filepath.Join(repoRoot(t), "examples", "app"), g, apptest.Options{
		StorePath: filepath.Join(t.TempDir(), "gated.db"),
		// The example's support route lists lookupAccount; the offline
		// model calls it once, after the plan.
		Tools: dawn.Tools(exampleTools...),
		// The release route's plan names the namesItem verifier.
		Markers: dawn.Capabilities(exampleTools...),
	})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /__gate/{name}", func(w http.ResponseWriter, r *http.Request) {
		g.openGate(r.PathValue("name"))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.Handle("/", h.API)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		// Let held runs end, and wait for them, before the store closes.
		g.openAll()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Runs.Shutdown(ctx)
	})
	return srv.URL, srv.URL + "/__gate"
}

// gatedModel is the offline model, except that a run whose last user
// message holds [hold:NAME] waits, once it has a tool result, until gate
// NAME is opened.
type gatedModel struct {
	inner llms.Model
	mu    sync.Mutex
	open  map[string]chan struct{}
}

var holdPattern = regexp.MustCompile(`\[hold:([A-Za-z0-9_-]+)\]`)

func (g *gatedModel) gate(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, ok := g.open[name]
	if !ok {
		ch = make(chan struct{})
		g.open[name] = ch
	}
	return ch
}

// openGate opens gate name; opening it again does nothing.
func (g *gatedModel) openGate(name string) {
	ch := g.gate(name)
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (g *gatedModel) openAll() {
	g.mu.Lock()
	names := make([]string, 0, len(g.open))
	for name := range g.open {
		names = append(names, name)
	}
	g.mu.Unlock()
	for _, name := range names {
		g.openGate(name)
	}
}

func (g *gatedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	var lastUser string
	toolResults := 0
	for _, m := range msgs {
		switch m.Role {
		case llms.ChatMessageTypeHuman:
			for _, p := range m.Parts {
				if tp, ok := p.(llms.TextContent); ok {
					lastUser = tp.Text
				}
			}
		case llms.ChatMessageTypeTool:
			toolResults++
		}
	}
	if m := holdPattern.FindStringSubmatch(lastUser); m != nil && toolResults > 0 {
		select {
		case <-g.gate(m[1]):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.inner.GenerateContent(ctx, msgs, opts...)
}

func (g *gatedModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, g, prompt, opts...)
}

// TestReadmeLangGraphExample: the README's LangGraph example is the code
// between the readme:langgraph markers of a client test that passes.
func TestReadmeLangGraphExample(t *testing.T) {
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "tools", "langgraph", "client.test.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := docstext.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	readme := []byte(docs)
	_, rest, ok := strings.Cut(string(src), "// readme:langgraph begin\n")
	region, _, ok2 := strings.Cut(rest, "// readme:langgraph end\n")
	if !ok || !ok2 {
		t.Fatal("client.test.mjs has no readme:langgraph begin/end markers")
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(region, " \n"), "\n") {
		lines = append(lines, strings.TrimPrefix(line, "  ")) // the test body's indent
	}
	_, after, ok := strings.Cut(string(readme), "<!-- readme:langgraph -->\n```js\n")
	block, _, ok2 := strings.Cut(after, "```\n")
	if !ok || !ok2 {
		t.Fatal("README has no ```js block after <!-- readme:langgraph -->")
	}
	if want := strings.Join(lines, "\n") + "\n"; !strings.Contains(block, want) {
		t.Errorf("the README's LangGraph example is not the tested code; the test runs:\n%s\nthe README shows:\n%s", want, block)
	}
}
