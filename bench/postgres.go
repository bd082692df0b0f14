package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// secPostgres is the report section of --postgres.
const secPostgres = "Postgres store (offline model, throwaway cluster with fsync on)"

// pgReplicas are the replica counts --postgres measures.
var pgReplicas = []int{1, 3}

// declarePostgresFigures lists the figures of --postgres.
func declarePostgresFigures(r *report, o options) {
	c := o.concurrency
	for _, n := range pgReplicas {
		k := fmt.Sprintf("pg%d_", n)
		r.declare(secPostgres, k+"seq_rps", fmt.Sprintf("%d replica(s): runs/wait sequential", n), "runs/s", info, 0)
		r.declare(secPostgres, k+"seq_p50", fmt.Sprintf("%d replica(s): runs/wait sequential latency p50", n), "ms", info, 0)
		r.declare(secPostgres, k+"seq_p99", fmt.Sprintf("%d replica(s): runs/wait sequential latency p99", n), "ms", info, 0)
		r.declare(secPostgres, k+"conc_rps", fmt.Sprintf("%d replica(s): runs/wait %d concurrent", n, c), "runs/s", info, 0)
		r.declare(secPostgres, k+"conc_p50", fmt.Sprintf("%d replica(s): runs/wait %d concurrent latency p50", n, c), "ms", info, 0)
		r.declare(secPostgres, k+"conc_p99", fmt.Sprintf("%d replica(s): runs/wait %d concurrent latency p99", n, c), "ms", info, 0)
	}
	r.declare(secPostgres, "pg_thread", "Postgres bytes per thread (tables and indexes / threads)", "B", info, 0)
}

// postgresPhase starts a throwaway Postgres cluster and, for 1 and 3
// replicas of `dawn start` on a fresh database of it, measures runs/wait
// through a client that sends each run to the next replica in turn (a
// load balancer without sticky sessions). Then it sizes what the threads
// take in the database.
func (b *bench) postgresPhase(ctx context.Context) error {
	cluster, err := pgtest.Start(pgtest.Options{Durable: true})
	if err != nil {
		return fmt.Errorf("starting a throwaway Postgres (needs Debian's postgresql package): %w", err)
	}
	defer cluster.Stop()
	app := b.dir("postgres")
	if err := writeWorkloadApp(app, ""); err != nil {
		return err
	}
	for _, n := range pgReplicas {
		dsn, err := cluster.NewDatabase()
		if err != nil {
			return err
		}
		if err := b.replicaFigures(ctx, app, dsn, n); err != nil {
			return err
		}
	}
	return nil
}

// replicaFigures runs the workload on n replicas sharing dsn.
func (b *bench) replicaFigures(ctx context.Context, app, dsn string, n int) error {
	env := []string{"DAWN_STORE=" + dsn}
	servers := make([]*proc, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() { servers[i], errs[i] = b.startServer(ctx, app, env) })
	}
	wg.Wait()
	defer func() {
		for _, s := range servers {
			if s != nil {
				s.stop(15 * time.Second)
			}
		}
	}()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	o := b.opts
	clients := make([]*loadClient, n)
	for i, s := range servers {
		clients[i] = newClient(s.url, o.route, o.concurrency)
	}
	phase := fmt.Sprintf("pg%d", n)
	op := func(name string) timed {
		return func(ctx context.Context, i int) error {
			_, err := clients[i%n].wait(ctx, b.threadID(phase+name, i))
			return err
		}
	}
	if _, err := runBatch(ctx, o.warmup, o.concurrency, op("warm")); err != nil {
		return err
	}
	seq, err := runBatch(ctx, o.runs, 1, op("seq"))
	if err != nil {
		return err
	}
	b.recordBatch(phase+"_seq", seq)
	conc, err := runBatch(ctx, o.runs, o.concurrency, op("conc"))
	if err != nil {
		return err
	}
	b.recordBatch(phase+"_conc", conc)
	if n == 1 {
		perThread, err := pgBytesPerThread(ctx, dsn)
		if err != nil {
			return err
		}
		b.rep.add("pg_thread", perThread)
	}
	return nil
}

// pgBytesPerThread is the size of the store's tables with their indexes
// and TOAST, divided by the threads they hold.
func pgBytesPerThread(ctx context.Context, dsn string) (float64, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	// Statistics and the free space map catch up with a VACUUM.
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		return 0, err
	}
	var threads, size int64
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM threads),
		(SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
		 WHERE c.relname IN ('threads', 'runs', 'history', 'owners') AND c.relkind = 'r')`).Scan(&threads, &size)
	if err != nil {
		return 0, err
	}
	if threads == 0 {
		return 0, fmt.Errorf("the database holds no threads")
	}
	return float64(size) / float64(threads), nil
}

// postgresMain runs --postgres: the Postgres figures alone.
func postgresMain(ctx context.Context, opts options) int {
	rep := newReport()
	rep.Config = map[string]any{"runs": opts.runs, "warmup": opts.warmup, "concurrency": opts.concurrency, "route": opts.route, "replicas": pgReplicas}
	declarePostgresFigures(rep, opts)
	describeMachine(rep, "load average at start")
	b := &bench{opts: opts, rep: rep, tag: fmt.Sprint(time.Now().UnixNano())}
	err := func() error {
		var err error
		if b.repo, err = repoRoot(); err != nil {
			return err
		}
		if b.tmp, err = os.MkdirTemp("", "dawnbench-"); err != nil {
			return err
		}
		if b.dawn = opts.dawn; b.dawn == "" {
			if b.dawn, err = buildDawn(ctx, b.repo, b.tmp); err != nil {
				return err
			}
		}
		for b.repeat = 0; b.repeat < opts.repeat && ctx.Err() == nil; b.repeat++ {
			if err := b.postgresPhase(ctx); err != nil && ctx.Err() == nil {
				return err
			}
		}
		return nil
	}()
	b.close()
	rep.note("each run: the 4-item plan on the offline model (5 writeTodos turns, 6 committed steps); runs go to the replicas in turn, as a load balancer without sticky sessions sends them; one machine runs Postgres, the replicas and the client")
	describeMachine(rep, "load average at end")
	rep.finish()
	if opts.json {
		if werr := rep.writeJSON(os.Stdout); werr != nil {
			fmt.Fprintln(os.Stderr, "bench:", werr)
		}
	} else {
		rep.writeTable(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --postgres:", err)
		return 1
	}
	return 0
}
