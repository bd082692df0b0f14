package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Side by side (--dawn2 without --wire-diff): two dawn binaries, old
// (--dawn) and new (--dawn2), each serving the workload app on one aimock,
// measured in --rounds alternating rounds by the --url2 comparison, and in
// each round's turn also the process figures: cold start, RSS idle and
// after --threads threads, SQLite bytes per thread.

// sideBySide holds the two binaries, the shared aimock and the tool's
// temp folder.
type sideBySide struct {
	o    options
	bins [2]string
	tmp  string
	mock *proc
}

// sideBySideMain runs --dawn2 and returns the exit code.
func sideBySideMain(ctx context.Context, o options) int {
	s := &sideBySide{o: o}
	c, err := s.run(ctx)
	s.close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --dawn2:", err)
		return 1
	}
	fmt.Printf("A = %s\nB = %s\n", s.bins[0], s.bins[1])
	c.write(os.Stdout)
	return 0
}

func (s *sideBySide) run(ctx context.Context) (*comparison, error) {
	repo, err := repoRoot()
	if err != nil {
		return nil, err
	}
	if s.tmp, err = os.MkdirTemp("", "dawn-sidebyside-"); err != nil {
		return nil, err
	}
	s.bins = [2]string{s.o.dawn, s.o.dawn2}
	if s.bins[0] == "" {
		if s.bins[0], err = buildDawn(ctx, repo, s.tmp); err != nil {
			return nil, err
		}
	}
	mockBin := s.o.aimock
	if mockBin == "" {
		mockBin = filepath.Join(repo, "tools", "aimock", "node_modules", ".bin", "llmock")
	}
	fixtures := filepath.Join(s.tmp, "aimock.json")
	if err := os.WriteFile(fixtures, aimockFixture, 0o644); err != nil {
		return nil, err
	}
	if s.mock, err = startAimock(ctx, mockBin, fixtures); err != nil {
		return nil, fmt.Errorf("aimock (%s; npm ci --prefix tools/aimock, or pass --aimock): %w", mockBin, err)
	}
	var urls [2]string
	for i, bin := range s.bins {
		app := filepath.Join(s.tmp, fmt.Sprintf("serve-%c", 'a'+i))
		if err := writeWorkloadApp(app, "openai:gpt-4o-mini"); err != nil {
			return nil, err
		}
		srv, err := startDawn(ctx, bin, app, s.mockEnv())
		if err != nil {
			return nil, err
		}
		defer srv.stop(15 * time.Second)
		urls[i] = srv.url
	}
	o := s.o
	o.url, o.url2, o.mock, o.mock2 = urls[0], urls[1], s.mock.url, s.mock.url
	return runComparison(ctx, o, s.processTurn)
}

func (s *sideBySide) close() {
	if s.mock != nil {
		s.mock.stop(2 * time.Second)
	}
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
	}
}

// mockEnv points the openai provider at the shared aimock.
func (s *sideBySide) mockEnv() []string {
	return []string{"OPENAI_BASE_URL=" + s.mock.url + "/v1", "OPENAI_API_KEY=test"}
}

// processTurn adds one binary's process figures for its turn of a round:
// the median of --samples cold starts on the workload app and on an app of
// --routes routes, and of as many `dawn routes --json` and `dawn check` on
// that app, then a fresh server's RSS idle and after --threads runs/wait
// on fresh threads, and the SQLite bytes per thread it leaves.
func (s *sideBySide) processTurn(ctx context.Context, c *comparison, r compareRound) error {
	bin, second := s.bins[r.s], r.s == 1
	dir := filepath.Join(s.tmp, fmt.Sprintf("r%d-%c", r.round+1, 'a'+r.s))
	work, many := filepath.Join(dir, "cold"), filepath.Join(dir, "many")
	if err := writeWorkloadApp(work, ""); err != nil {
		return err
	}
	if err := writeManyRoutes(many, s.o.routes); err != nil {
		return err
	}
	b := &bench{}
	for _, app := range []struct{ name, dir string }{
		{"dawn start cold start -> /healthz, workload app", work},
		{fmt.Sprintf("dawn start cold start -> /healthz, %d routes", s.o.routes), many},
	} {
		var ds []time.Duration
		for range s.o.samples {
			d, err := b.coldStartWith(ctx, bin, app.dir)
			if err != nil {
				return err
			}
			ds = append(ds, d)
		}
		c.add(app.name, "ms", second, median(millis(ds)))
	}
	b.dawn = bin
	for _, cmd := range []struct {
		name string
		args []string
	}{
		{"dawn routes --json", []string{"routes", "--app", many, "--json"}},
		{"dawn check", []string{"check", "--app", many}},
	} {
		var ds []time.Duration
		for range s.o.samples {
			d, err := b.timeCommand(ctx, cmd.args...)
			if err != nil {
				return err
			}
			ds = append(ds, d)
		}
		c.add(fmt.Sprintf("%s, %d routes", cmd.name, s.o.routes), "ms", second, median(millis(ds)))
	}
	return s.memoryTurn(ctx, c, r, filepath.Join(dir, "memory"))
}

// memoryTurn starts a fresh server of the round's binary on the aimock
// workload in app and adds its RSS idle and after --threads threads, and
// the SQLite bytes per thread once it has stopped.
func (s *sideBySide) memoryTurn(ctx context.Context, c *comparison, r compareRound, app string) error {
	second := r.s == 1
	if err := writeWorkloadApp(app, "openai:gpt-4o-mini"); err != nil {
		return err
	}
	srv, err := startDawn(ctx, s.bins[r.s], app, s.mockEnv())
	if err != nil {
		return err
	}
	defer srv.stop(15 * time.Second)
	idle, err := processRSS(srv.pid())
	if err != nil {
		return err
	}
	client := newClient(srv.url, s.o.route, 1)
	if _, err := runBatch(ctx, s.o.threads, 1, func(ctx context.Context, i int) error {
		_, err := client.wait(ctx, fmt.Sprintf("%s-mem-%d", r.tag, i))
		return err
	}); err != nil {
		return err
	}
	after, err := processRSS(srv.pid())
	if err != nil {
		return err
	}
	srv.stop(15 * time.Second) // closing the store checkpoints the WAL into the file
	perThread, err := sqliteBytesPerThread(filepath.Join(app, ".dawn", "dawn.db"))
	if err != nil {
		return err
	}
	c.add("server RSS idle", "MiB", second, float64(idle)/(1<<20))
	c.add(fmt.Sprintf("server RSS after %d threads", s.o.threads), "MiB", second, float64(after)/(1<<20))
	c.add("SQLite bytes per thread", "B", second, perThread)
	return nil
}
