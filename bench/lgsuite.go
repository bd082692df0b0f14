package main

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The LangGraph suite mode runs LangGraph.js's own server tests
// (libs/langgraph-api/tests/api.test.mts of a langgraphjs checkout) against
// `dawn start`. Each graph those tests name is a route of the app in
// lgsuite/app, scripted on aimock by lgsuite/fixtures.json to behave like
// it: the agent answers, calls a tool, answers again. The result is a
// measurement, one row per describe block, not a test of this repository.

//go:embed all:lgsuite
var lgsuiteFiles embed.FS

// upstreamURL is the server address the upstream tests are written for.
const upstreamURL = "http://localhost:2024"

// upstreamGraphConfig is the LANGGRAPH_CONFIG the upstream tests' server
// runs with: the default assistants' config and context that the tests
// read back.
const upstreamGraphConfig = `{"agent": {"configurable": {"model_name": "openai"}}, "simple_runtime": {"context": {"model": "unknown"}}}`

// suiteTest is one test of vitest's JSON report.
type suiteTest struct {
	Ancestors []string `json:"ancestorTitles"`
	Title     string   `json:"title"`
	Status    string   `json:"status"`
	Failures  []string `json:"failureMessages"`
}

// suiteReport is the part of vitest's JSON report the tool reads.
type suiteReport struct {
	TestResults []struct {
		AssertionResults []suiteTest `json:"assertionResults"`
	} `json:"testResults"`
}

// suiteRow counts one describe block's outcomes.
type suiteRow struct {
	Block                 string
	Tests, Passed, Failed int
	Skipped               int
	failures              []string
}

// langGraphSuiteMain runs --langgraph-suite and prints its table; the exit
// code is 1 only when the suite could not be run.
func langGraphSuiteMain(ctx context.Context, opts options) int {
	rows, err := runLangGraphSuite(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --langgraph-suite:", err)
		return 1
	}
	writeSuite(os.Stdout, rows, opts.json)
	return 0
}

func runLangGraphSuite(ctx context.Context, opts options) ([]suiteRow, error) {
	tests, err := findSuiteTests(opts.langGraphSuite)
	if err != nil {
		return nil, err
	}
	tmp, bin, err := scratch(ctx, opts, "dawnlgsuite-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	nodeDir, err := suiteNodeModules(ctx)
	if err != nil {
		return nil, err
	}
	if err := copyEmbedded(lgsuiteFiles, "lgsuite", tmp); err != nil {
		return nil, err
	}
	aimockBin := opts.aimock
	if aimockBin == "" {
		repo, err := repoRoot()
		if err != nil {
			return nil, err
		}
		aimockBin = filepath.Join(repo, "tools", "aimock", "node_modules", ".bin", "llmock")
	}
	mock, err := startAimock(ctx, aimockBin, filepath.Join(tmp, "fixtures.json"))
	if err != nil {
		return nil, fmt.Errorf("aimock (npm ci --prefix tools/aimock installs it): %w", err)
	}
	defer mock.stop(2 * time.Second)
	srv, err := startDawn(ctx, bin, filepath.Join(tmp, "app"), []string{"OPENAI_BASE_URL=" + mock.url + "/v1", "OPENAI_API_KEY=test", "LANGGRAPH_CONFIG=" + upstreamGraphConfig})
	if err != nil {
		return nil, err
	}
	defer srv.stop(10 * time.Second)
	if err := placeSuiteTests(tests, nodeDir, srv.url); err != nil {
		return nil, err
	}
	out := filepath.Join(tmp, "vitest.json")
	cmd := exec.CommandContext(ctx, filepath.Join(nodeDir, "node_modules", ".bin", "vitest"), "run", "api.test.mts",
		"--reporter=json", "--outputFile="+out, "--testTimeout=30000")
	cmd.Dir = nodeDir
	cmd.Env = childEnv()
	log, _ := cmd.CombinedOutput() // vitest exits 1 when a test fails; the report says which
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("vitest wrote no report (%v); its output ends:\n%s", err, lastLines(string(log), 30))
	}
	return parseSuite(data)
}

// findSuiteTests accepts a langgraphjs checkout or the tests folder itself.
func findSuiteTests(dir string) (string, error) {
	for _, d := range []string{filepath.Join(dir, "libs", "langgraph-api", "tests"), dir} {
		if _, err := os.Stat(filepath.Join(d, "api.test.mts")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s holds no libs/langgraph-api/tests/api.test.mts: pass a langgraphjs checkout (the tests were measured at commit f8bdf16d)", dir)
}

// suiteNodeModules installs the suite's pinned npm packages once into the
// user's cache folder, keyed by the lock file, and returns that folder.
// Its vitest setup file answers the tests' /internal/truncate calls (see
// lgsuite/node/truncate.setup.mjs).
func suiteNodeModules(ctx context.Context) (string, error) {
	lock, err := lgsuiteFiles.ReadFile("lgsuite/node/package-lock.json")
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(lock)
	dir := filepath.Join(cache, "dawn-bench", "langgraph-suite-"+hex.EncodeToString(sum[:6]))
	// The config and setup files are written on every run, so that a
	// cached install runs with this tool's own.
	if err := copyEmbedded(lgsuiteFiles, "lgsuite/node", dir); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "vitest")); err == nil {
		return dir, nil
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v\n%s", dir, err, lastLines(string(out), 20))
	}
	return dir, nil
}

// placeSuiteTests copies the upstream test files next to the installed
// packages, pointed at url instead of the upstream dev server.
func placeSuiteTests(tests, dir, url string) error {
	entries, err := os.ReadDir(tests)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".mts") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(tests, e.Name()))
		if err != nil {
			return err
		}
		data = []byte(strings.ReplaceAll(string(data), upstreamURL, url))
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyEmbedded writes the embedded folder root into dst.
func copyEmbedded(fsys embed.FS, root, dst string) error {
	return fs.WalkDir(fsys, root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fsys.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// parseSuite counts vitest's report per top-level describe block, in the
// order the blocks first appear.
func parseSuite(data []byte) ([]suiteRow, error) {
	var rep suiteReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("reading vitest's report: %w", err)
	}
	var rows []suiteRow
	index := map[string]int{}
	for _, file := range rep.TestResults {
		for _, t := range file.AssertionResults {
			block := "(top level)"
			if len(t.Ancestors) > 0 {
				block = t.Ancestors[0]
			}
			i, ok := index[block]
			if !ok {
				i = len(rows)
				index[block] = i
				rows = append(rows, suiteRow{Block: block})
			}
			rows[i].count(t)
		}
	}
	return rows, nil
}

func (r *suiteRow) count(t suiteTest) {
	r.Tests++
	switch t.Status {
	case "passed":
		r.Passed++
	case "failed":
		r.Failed++
		first := ""
		if len(t.Failures) > 0 {
			first, _, _ = strings.Cut(t.Failures[0], "\n")
		}
		r.failures = append(r.failures, strings.Join(append(t.Ancestors, t.Title), " › ")+": "+firstWords(first, 40))
	default:
		r.Skipped++
	}
}

// writeSuite prints the table per describe block, then each failure.
func writeSuite(w io.Writer, rows []suiteRow, asJSON bool) {
	total := suiteRow{Block: "**all**"}
	var failures []string
	for _, r := range rows {
		total.Tests += r.Tests
		total.Passed += r.Passed
		total.Failed += r.Failed
		total.Skipped += r.Skipped
		failures = append(failures, r.failures...)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"blocks": rows, "all": total, "failures": failures})
		return
	}
	fmt.Fprintln(w, "| describe | tests | passed | failed | skipped |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range append(rows, total) {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d |\n", r.Block, r.Tests, r.Passed, r.Failed, r.Skipped)
	}
	sort.Strings(failures)
	if len(failures) > 0 {
		fmt.Fprintln(w, "\nfailed:")
	}
	for _, f := range failures {
		fmt.Fprintln(w, "- "+f)
	}
}
