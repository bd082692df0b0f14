package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/store"
)

// memoryPhase starts a fresh server on the aimock workload, reads its RSS
// idle and after opts.threads runs on fresh threads, stops it, and sizes
// the database it leaves.
func (b *bench) memoryPhase(ctx context.Context) error {
	if b.mock == nil {
		for _, k := range []string{"rss_idle", "rss_threads", "thread_mem", "sqlite_thread"} {
			b.rep.skip(k, b.noMock)
		}
		return nil
	}
	app := b.dir("memory")
	if err := writeWorkloadApp(app, "openai:gpt-4o-mini"); err != nil {
		return err
	}
	srv, err := b.startServer(ctx, app, b.mockEnv())
	if err != nil {
		return err
	}
	defer srv.stop(15 * time.Second)
	idle, err := processRSS(srv.pid())
	if err != nil {
		b.rep.skip("rss_idle", err.Error())
		b.rep.skip("rss_threads", err.Error())
		b.rep.skip("thread_mem", err.Error())
	} else {
		b.rep.add("rss_idle", float64(idle)/(1<<20))
	}
	c := newClient(srv.url, b.opts.route, 1)
	bt, err := runBatch(ctx, b.opts.threads, 1, b.waitOp(c, "mem"))
	if err != nil {
		return err
	}
	if bt.CutShort {
		b.noteCut("memory phase", bt)
		return nil
	}
	if idle > 0 {
		if after, err := processRSS(srv.pid()); err == nil {
			b.rep.add("rss_threads", float64(after)/(1<<20))
			b.rep.add("thread_mem", float64(after-idle)/1024/float64(b.opts.threads))
		}
	}
	srv.stop(15 * time.Second) // closing the store checkpoints the WAL into the file
	perThread, err := sqliteBytesPerThread(filepath.Join(app, ".dawn", "dawn.db"))
	if err != nil {
		return err
	}
	b.rep.add("sqlite_thread", perThread)
	return nil
}

// sqliteBytesPerThread sizes a closed store: its files (the database, plus
// any WAL left behind) divided by the threads it holds.
func sqliteBytesPerThread(path string) (float64, error) {
	var size int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	st, err := store.Open(path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	threads, _, err := st.Stats(context.Background())
	if err != nil {
		return 0, err
	}
	if threads == 0 {
		return 0, fmt.Errorf("the store at %s holds no threads", path)
	}
	return float64(size) / float64(threads), nil
}

// processPhase times what a user waits for at the terminal: cold starts,
// dawn routes --json and dawn check on a large app, and dawn dev's reload.
func (b *bench) processPhase(ctx context.Context) error {
	example := b.dir("example")
	if err := copyApp(filepath.Join(b.repo, "examples", "app"), example); err != nil {
		return fmt.Errorf("copying the example app: %w", err)
	}
	// The example app has Go tools: what starts in production is its own
	// binary (what dawn build ships), built here once, not the stock
	// dawn, which would compile the app first.
	exampleBin, err := b.exampleBinary(ctx)
	if err != nil {
		return err
	}
	if err := b.sample(ctx, "cold_example", func() (time.Duration, error) { return b.coldStartWith(ctx, exampleBin, example) }); err != nil {
		return err
	}
	many := b.dir("many")
	if err := writeManyRoutes(many, b.opts.routes); err != nil {
		return err
	}
	steps := []struct {
		key string
		fn  func() (time.Duration, error)
	}{
		{"cold_many", func() (time.Duration, error) { return b.coldStart(ctx, many) }},
		{"routes_json", func() (time.Duration, error) { return b.timeCommand(ctx, "routes", "--app", many, "--json") }},
		{"check", func() (time.Duration, error) { return b.timeCommand(ctx, "check", "--app", many) }},
	}
	for _, s := range steps {
		if err := b.sample(ctx, s.key, s.fn); err != nil {
			return err
		}
	}
	return b.devReload(ctx)
}

// sample records the median of opts.samples timings of fn under key.
func (b *bench) sample(ctx context.Context, key string, fn func() (time.Duration, error)) error {
	var ds []time.Duration
	for range b.opts.samples {
		if ctx.Err() != nil {
			break
		}
		d, err := fn()
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		ds = append(ds, d)
	}
	if len(ds) > 0 {
		b.rep.add(key, median(millis(ds)))
	}
	return nil
}

// coldStart starts `dawn start` on app with no store yet and returns the
// time from exec to the first /healthz 200.
func (b *bench) coldStart(ctx context.Context, app string) (time.Duration, error) {
	return b.coldStartWith(ctx, b.dawn, app)
}

// exampleBinary builds the example app's own binary (its main package
// registers its Go tools) once a bench, and returns its path.
func (b *bench) exampleBinary(ctx context.Context) (string, error) {
	bin := filepath.Join(b.tmp, "example-app")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./examples/app")
	cmd.Dir = b.repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./examples/app in %s: %v\n%s", b.repo, err, out)
	}
	return bin, nil
}

// coldStartWith is coldStart with the server binary bin.
func (b *bench) coldStartWith(ctx context.Context, bin, app string) (time.Duration, error) {
	if err := os.RemoveAll(filepath.Join(app, ".dawn")); err != nil {
		return 0, err
	}
	t0 := time.Now()
	p, err := startDawn(ctx, bin, app, nil)
	if err != nil {
		return 0, err
	}
	d := time.Since(t0)
	p.stop(10 * time.Second)
	return d, nil
}

// timeCommand runs dawn with args to its exit and returns how long it took.
// A non-zero exit is an error.
func (b *bench) timeCommand(ctx context.Context, args ...string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, b.dawn, args...)
	cmd.Env = childEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("dawn %s: %v\n%s", strings.Join(args, " "), err, lastLines(out.String(), 10))
	}
	return d, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// devReload runs `dawn dev` on the workload app (offline model), edits
// plan.md opts.samples times, and times each edit until a run on a fresh
// thread carries the edited item.
func (b *bench) devReload(ctx context.Context) error {
	app := b.dir("dev")
	if err := writeWorkloadApp(app, ""); err != nil {
		return err
	}
	p, err := start(ctx, "dawn dev", b.dawn, []string{"dev", "--app", app, "--port", "0"}, nil, 30*time.Second)
	if err != nil {
		return err
	}
	defer p.stop(10 * time.Second)
	c := newClient(p.url, b.opts.route, 1)
	if _, err := runBatch(ctx, 20, 1, b.waitOp(c, "dev-warm")); err != nil {
		return err
	}
	plan := filepath.Join(app, "support", "[tenant]", "plan.md")
	polls := 0
	edit := 0
	return b.sample(ctx, "dev_reload", func() (time.Duration, error) {
		edit++
		marker := fmt.Sprintf("Read edit %d of repeat %d", edit, b.repeat+1)
		body := strings.Replace(planMD, "Understand the customer request", marker, 1)
		time.Sleep(100 * time.Millisecond) // let the last edit's reload settle
		t0 := time.Now()
		if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
			return 0, err
		}
		for {
			polls++
			out, err := c.wait(ctx, b.threadID("dev", polls))
			if err != nil {
				return 0, err
			}
			if bytes.Contains(out, []byte(marker)) {
				return time.Since(t0), nil
			}
			if time.Since(t0) > 10*time.Second {
				return 0, fmt.Errorf("runs did not see the edit of %s within 10s", plan)
			}
		}
	})
}
