package main

import "fmt"

// Report sections.
const (
	secAimock  = "aimock workload (openai:gpt-4o-mini on aimock)"
	secProcess = "process"
	secInstant = "instant model (offline, no network)"
)

// declareFigures lists every figure, with the targets, in the
// order the table shows them.
func declareFigures(r *report, o options) {
	c := o.concurrency
	r.declare(secAimock, "mock_pair", "aimock alone: writeTodos + answer request pair", "ms", info, 0)
	r.declare(secAimock, "model_bytes_first", "bytes sent to the model: first request (Dawn: 1.3 KB)", "B", atMost, 1300)
	r.declare(secAimock, "model_bytes", "bytes sent to the model per run = per plan (2 requests)", "B", info, 0)
	r.declare(secAimock, "model_tokens", "prompt tokens per run = per plan (o200k, 2 requests)", "tok", info, 0)
	r.declare(secAimock, "seq_rps", "runs/wait sequential", "runs/s", atLeast, 600)
	r.declare(secAimock, "seq_p50", "runs/wait sequential latency p50", "ms", info, 0)
	r.declare(secAimock, "seq_p99", "runs/wait sequential latency p99", "ms", info, 0)
	r.declare(secAimock, "overhead", "server overhead per run (p50 run - p50 mock pair)", "ms", atMost, 1)
	r.declare(secAimock, "conc_rps", fmt.Sprintf("runs/wait %d concurrent", c), "runs/s", atLeast, 1000)
	r.declare(secAimock, "conc_p50", fmt.Sprintf("runs/wait %d concurrent latency p50", c), "ms", info, 0)
	r.declare(secAimock, "conc_p99", fmt.Sprintf("runs/wait %d concurrent latency p99", c), "ms", info, 0)
	r.declare(secAimock, "stream_plan", "runs/stream: request sent -> first plan_update (p50)", "ms", atMost, 2)
	r.declare(secAimock, "cpu_seq", "server CPU per run, sequential", "ms", atMost, 1)
	r.declare(secAimock, "cpu_conc", fmt.Sprintf("server CPU per run, %d concurrent", c), "ms", atMost, 1)

	r.declare(secProcess, "cold_example", "dawn start cold start -> /healthz 200, example app", "ms", atMost, 50)
	r.declare(secProcess, "cold_many", fmt.Sprintf("dawn start cold start -> /healthz 200, %d routes", o.routes), "ms", atMost, 200)
	r.declare(secProcess, "dev_reload", "dawn dev: plan.md edited -> next run sees it", "ms", atMost, 50)
	r.declare(secProcess, "routes_json", fmt.Sprintf("dawn routes --json, %d routes", o.routes), "ms", atMost, 100)
	r.declare(secProcess, "check", fmt.Sprintf("dawn check, %d routes", o.routes), "ms", atMost, 100)
	r.declare(secProcess, "rss_idle", "server RSS idle", "MiB", atMost, 30)
	r.declare(secProcess, "rss_threads", fmt.Sprintf("server RSS after %d threads", o.threads), "MiB", atMost, 60)
	r.declare(secProcess, "thread_mem", "memory per idle thread (RSS growth / threads)", "KiB", info, 0)
	r.declare(secProcess, "sqlite_thread", "SQLite bytes per thread (file after checkpoint / threads)", "B", atMost, 5000)

	r.declare(secInstant, "inst_seq_rps", "runs/wait sequential", "runs/s", info, 0)
	r.declare(secInstant, "inst_seq_p50", "runs/wait sequential latency p50", "ms", info, 0)
	r.declare(secInstant, "inst_seq_p99", "runs/wait sequential latency p99", "ms", info, 0)
	r.declare(secInstant, "inst_conc_rps", fmt.Sprintf("runs/wait %d concurrent", c), "runs/s", info, 0)
	r.declare(secInstant, "inst_conc_p50", fmt.Sprintf("runs/wait %d concurrent latency p50", c), "ms", info, 0)
	r.declare(secInstant, "inst_conc_p99", fmt.Sprintf("runs/wait %d concurrent latency p99", c), "ms", info, 0)
	r.declare(secInstant, "inst_stream_plan", "runs/stream: request sent -> first plan_update (p50)", "ms", info, 0)
	r.declare(secInstant, "inst_cpu_seq", "server CPU per run, sequential", "ms", info, 0)
	r.declare(secInstant, "inst_cpu_conc", fmt.Sprintf("server CPU per run, %d concurrent", c), "ms", info, 0)
}
