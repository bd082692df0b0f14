package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/docstext"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/planfirst"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/router"
)

// readme returns the user documentation: the README and docs/, in
// reading order.
func readme(t *testing.T) string {
	t.Helper()
	text, err := docstext.Read("../..")
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// curlCall is one curl command from the README.
type curlCall struct {
	method, path, body string
}

var (
	curlURL  = regexp.MustCompile(`http://127\.0\.0\.1:PORT([^\s'"]+)`)
	curlVerb = regexp.MustCompile(`-X ([A-Z]+)`)
	curlBody = regexp.MustCompile(`-d '([^']*)'`)
)

// curlCalls finds every curl command in the README's sh blocks, joining
// lines continued with a backslash.
func curlCalls(t *testing.T, text string) []curlCall {
	t.Helper()
	var calls []curlCall
	inSh := false
	var cmd strings.Builder
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "```sh":
			inSh = true
			continue
		case strings.HasPrefix(trimmed, "```"):
			inSh = false
			continue
		case !inSh:
			continue
		}
		cmd.WriteString(strings.TrimSuffix(trimmed, "\\"))
		cmd.WriteByte(' ')
		if strings.HasSuffix(trimmed, "\\") {
			continue
		}
		c := cmd.String()
		cmd.Reset()
		if !strings.HasPrefix(c, "curl ") {
			continue
		}
		u := curlURL.FindStringSubmatch(c)
		if u == nil {
			t.Fatalf("README curl command without a http://127.0.0.1:PORT URL: %s", c)
		}
		call := curlCall{method: http.MethodGet, path: u[1]}
		if v := curlVerb.FindStringSubmatch(c); v != nil {
			call.method = v[1]
		} else if strings.Contains(c, " -d ") {
			call.method = http.MethodPost
		}
		if b := curlBody.FindStringSubmatch(c); b != nil {
			call.body = b[1]
		}
		calls = append(calls, call)
	}
	return calls
}

// runnableShell is every sh block of the docs that is not marked
// <!-- not run: … -->, as fenced text for curlCalls.
func runnableShell(t *testing.T) string {
	t.Helper()
	blocks, err := docstext.Blocks("../..")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, block := range blocks {
		if block.Lang == "sh" && !strings.HasPrefix(block.Marker, "not run:") {
			b.WriteString("```sh\n" + block.Text + "```\n")
		}
	}
	return b.String()
}

// TestReadmeExamples runs every curl command in the README, in order,
// against the example app with the offline model, and checks the SSE lines
// the README shows against the real stream.
func TestReadmeExamples(t *testing.T) {
	text := readme(t)
	h := dawntest.New(t, ".", models.NewOffline(), dawntest.Options{Tools: appTools(), Markers: appMarkers()})
	base := h.URL
	calls := curlCalls(t, runnableShell(t))
	if len(calls) < 5 {
		t.Fatalf("found %d curl commands in the README; the parser is broken", len(calls))
	}
	shown := readmeStream(t, text)
	for _, c := range calls {
		req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Errorf("README: curl %s %s gave %d: %s", c.method, c.path, resp.StatusCode, body)
			continue
		}
		if strings.HasSuffix(c.path, "/runs/stream") && strings.Contains(c.body, "/support/acme") {
			// A model call's duration is the one thing that differs
			// from run to run.
			if !strings.HasPrefix(sameDurations(string(body)), sameDurations(shown)) {
				t.Errorf("README's stream example does not match the server.\nREADME:\n%s\nserver:\n%s", shown, firstLines(string(body), strings.Count(shown, "\n")))
			}
		}
	}
}

var durationMS = regexp.MustCompile(`"duration_ms":[0-9]+`)

// sameDurations sets every duration_ms of a stream's text to 0.
func sameDurations(s string) string {
	return durationMS.ReplaceAllString(s, `"duration_ms":0`)
}

// readmeStream is the text block after the <!-- readme:stream --> marker.
func readmeStream(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "<!-- readme:stream -->\n```text\n")
	if !ok {
		t.Fatal("README has no <!-- readme:stream --> block")
	}
	block, _, _ := strings.Cut(rest, "```")
	return block
}

func firstLines(s string, n int) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

// TestReadmeGoExamples checks that every Go block in the README is copied
// from the example app's main.go or the example capability, examples/notes.
func TestReadmeGoExamples(t *testing.T) {
	var sources []string
	for _, file := range []string{"main.go", "eval_test.go", "../notes/notes.go", "../notes/notes_test.go"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(data))
	}
	blocks := 0
	for _, part := range strings.Split(readme(t), "```go\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		blocks++
		if !slices.ContainsFunc(sources, func(src string) bool { return strings.Contains(src, block) }) {
			t.Errorf("this README Go example is not in examples/app/main.go or examples/notes:\n%s", block)
		}
	}
	if blocks == 0 {
		t.Fatal("the README has no Go example; the parser is broken")
	}
}

// TestReadmeFileExamples checks the README's plan.md and plan-first
// examples with the parsers that read them.
func TestReadmeFileExamples(t *testing.T) {
	text := readme(t)
	checked := 0
	for _, part := range strings.Split(text, "```markdown\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		f, err := planning.ParseFile("plan.md", []byte(block))
		if err != nil || !f.Settings.Enforce || (len(f.Seed) == 0 && strings.Contains(block, "- [")) { // the model writes a front-matter-only plan
			t.Errorf("README plan.md example: %v (enforce %v, %d items)\n%s", err, f.Settings.Enforce, len(f.Seed), block)
		}
		checked++
	}
	for _, part := range strings.Split(text, "```json\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		if !strings.Contains(block, `"steps"`) {
			continue
		}
		if _, err := planfirst.Parse(block); err != nil {
			t.Errorf("README plan-first example does not validate: %v\n%s", err, block)
		}
		checked++
	}
	if checked < 2 {
		t.Fatalf("checked %d README file examples, want the plan.md and the plan-first one", checked)
	}
}

// TestDocsAgentExamples parses every ```md block of the docs as the file it
// shows: an agent.md, or a plan.md when it has task items or plan keys.
func TestDocsAgentExamples(t *testing.T) {
	blocks, err := docstext.Blocks("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, b := range blocks {
		if b.Lang != "md" {
			continue
		}
		checked++
		if strings.Contains(b.Text, "- [") || strings.Contains(b.Text, "enforce:") {
			if _, err := planning.ParseFile("plan.md", []byte(b.Text)); err != nil {
				t.Errorf("%s:%d: this plan.md example does not parse: %v", b.File, b.Line, err)
			}
			continue
		}
		if _, err := router.ParseAgentWith("agent.md", []byte(b.Text), capabilities.FrontMatterClaims(markers.All())); err != nil {
			t.Errorf("%s:%d: this agent.md example does not parse: %v", b.File, b.Line, err)
		}
	}
	if checked < 3 {
		t.Fatalf("checked %d md blocks; the parser is broken", checked)
	}
}

// TestDocsConfigExamples loads every ```yaml block of the docs as an app's
// dawn.yaml, with every capability's settings.
func TestDocsConfigExamples(t *testing.T) {
	blocks, err := docstext.Blocks("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCP_TOKEN", "example")
	checked := 0
	for _, b := range blocks {
		if b.Lang != "yaml" || isEvalCase(b) || strings.HasPrefix(b.Marker, "docs:") {
			continue // an eval case, or a file a named test runs (docs:NAME)
		}
		checked++
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "dawn.yaml"), []byte(b.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := app.LoadConfig(dir, markers.All()); err != nil {
			t.Errorf("%s:%d: this dawn.yaml example does not load: %v", b.File, b.Line, err)
		}
	}
	if checked < 2 {
		t.Fatalf("checked %d yaml blocks; the parser is broken", checked)
	}
}
