package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/moby/moby/client"

	sbx "github.com/dawn-go/dawn/internal/sandbox"
	"github.com/dawn-go/dawn/internal/sandbox/docker"
	"github.com/dawn-go/dawn/internal/sandbox/sandboxtest"
)

// BenchmarkRunBash measures runBash "true" through the tool, files synced
// in and out: warm (the thread's box is running) and cold (a new thread,
// so a new box each call), per provider. It reports the median, and for
// docker the memory of an idle warm box as its cgroup counts it (a local
// box runs no process between commands).
//
//	go test -run '^$' -bench BenchmarkRunBash -benchtime 30x ./sandbox/
func BenchmarkRunBash(b *testing.B) {
	for _, p := range []struct {
		name    string
		require func(testing.TB)
		s       sbx.Settings
	}{
		{"local", sandboxtest.Bwrap, sbx.Settings{Provider: Local}},
		{"docker", sandboxtest.Docker, sandboxtest.DockerSettings()},
	} {
		s := p.s
		s.Resources = sbx.Resources{MemoryMB: 512, CPUs: 1, Timeout: time.Minute, Pids: 256, DiskMB: 64}
		s.IdleTimeout = time.Hour
		for _, mode := range []string{"warm", "cold"} {
			b.Run(p.name+"/"+mode, func(b *testing.B) {
				p.require(b)
				benchRunBash(b, s, mode == "cold")
			})
		}
	}
}

// benchRunBash runs runBash "true" b.N times, each on a new thread when
// cold, and reports the median.
func benchRunBash(b *testing.B, s sbx.Settings, cold bool) {
	prov, err := newProvider(s)
	if err != nil {
		b.Fatal(err)
	}
	pool := sbx.NewPool(prov, s.IdleTimeout)
	defer pool.Close(context.Background())
	tool := &runBash{box: &boxes{s: s, pool: pool}}
	call := func(thread string) {
		res, err := tool.Call(context.Background(), capabilities.Invocation{ThreadID: thread, RouteID: "/bench", Input: json.RawMessage(`{"command":"true"}`)})
		if err != nil || !json.Valid(res.Output) {
			b.Fatalf("runBash true: %v %s", err, res.Output)
		}
	}
	call("warm") // starts the warm box
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		thread := "warm"
		if cold {
			thread = fmt.Sprintf("cold-%d", i)
		}
		start := time.Now()
		call(thread)
		times = append(times, time.Since(start))
		if cold {
			b.StopTimer()
			_ = pool.Destroy(context.Background(), poolKey(thread, ""))
			b.StartTimer()
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	if s.Provider == Docker && !cold {
		b.ReportMetric(idleMemoryMB(b, prov), "idle-MB")
	}
}

// idleMemoryMB is the memory the cgroup of the one running sandbox
// container counts, from the Engine API's stats.
func idleMemoryMB(b *testing.B, prov sbx.Provider) float64 {
	cli := prov.(*docker.Provider).Client()
	ctx := context.Background()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("label", docker.Label)})
	if err != nil || len(list.Items) == 0 {
		b.Fatalf("no sandbox container: %v", err)
	}
	st, err := cli.ContainerStats(ctx, list.Items[0].ID, client.ContainerStatsOptions{Stream: false})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Body.Close()
	var v struct {
		Memory struct {
			Usage uint64            `json:"usage"`
			Stats map[string]uint64 `json:"stats"`
		} `json:"memory_stats"`
	}
	if err := json.NewDecoder(st.Body).Decode(&v); err != nil {
		b.Fatal(err)
	}
	used := v.Memory.Usage - v.Memory.Stats["total_inactive_file"]
	return float64(used) / (1 << 20)
}
