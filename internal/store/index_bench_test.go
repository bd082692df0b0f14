package store

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/embedtest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/store/dialect"
)

// benchDims is the vector length of the search benchmarks: OpenAI's
// text-embedding-3-small.
const benchDims = 1536

// hashEmbedder makes a fixed pseudo-random vector of each text, in
// process: the benchmarks measure the store, not a model.
type hashEmbedder struct{ dims int }

func (h hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		f := fnv.New64a()
		f.Write([]byte(t))
		r := rand.New(rand.NewPCG(f.Sum64(), 1))
		v := make([]float32, h.dims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out, nil
}

// BenchmarkSearchByMeaning measures one search with a query over n items
// of 1536-dimension vectors, the exact scan in Go, on SQLite (a file) and
// on Postgres: p50 and p99 latency over the searches of the run, and the
// bytes allocated per search. The items are written straight through the
// dialect, a thousand per transaction, so that seeding takes seconds.
//
//	go test -run '^$' -bench BenchmarkSearchByMeaning -benchtime 20x ./internal/store/
func BenchmarkSearchByMeaning(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("sqlite/%dk", n/1000), func(b *testing.B) {
			s := openIndexed(b, filepath.Join(b.TempDir(), "dawn.db"))
			benchSearch(b, s, n)
		})
		b.Run(fmt.Sprintf("postgres/%dk", n/1000), func(b *testing.B) {
			s := openIndexed(b, pgtest.Database(b))
			benchSearch(b, s, n)
		})
	}
}

func openIndexed(b *testing.B, dsn string) Store {
	s, err := OpenWith(dsn, Options{Index: &Index{Embedder: hashEmbedder{benchDims}, Model: "bench:hash", Dims: benchDims, MinSimilarity: -1}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

func benchSearch(b *testing.B, s Store, n int) {
	ctx := context.Background()
	seedVectors(b, dbOf(s), n)
	runtime.GC()
	var times []time.Duration
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stopCPU := reportCPU(b)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		items, err := s.SearchItems(ctx, ItemQuery{Prefix: []string{"bench"}, Query: "query " + strconv.Itoa(i), Limit: 10, NoRefresh: true})
		times = append(times, time.Since(start))
		if err != nil || len(items) != 10 {
			b.Fatalf("search: %d items, %v", len(items), err)
		}
	}
	b.StopTimer()
	stopCPU()
	runtime.ReadMemStats(&after)
	slices.Sort(times)
	pct := func(p float64) float64 {
		return float64(times[min(len(times)-1, int(p*float64(len(times))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(len(times))/(1<<20), "MiB-alloc/search")
}

// seedVectors writes n items under ["bench", "u<i%10>"] with a vector
// each, a thousand per transaction.
func seedVectors(b *testing.B, s *DB, n int) {
	ctx := context.Background()
	emb := hashEmbedder{benchDims}
	now := time.Now().UnixNano()
	const batch = 1000
	for start := 0; start < n; start += batch {
		texts := make([]string, 0, batch)
		for i := start; i < min(start+batch, n); i++ {
			texts = append(texts, "item "+strconv.Itoa(i))
		}
		vectors, _ := emb.Embed(ctx, texts)
		err := s.write(ctx, func(tx dialect.Tx) error {
			for j, text := range texts {
				ns := encodeNamespace([]string{"bench", "u" + strconv.Itoa((start+j)%10)})
				key := "k" + strconv.Itoa(start+j)
				value, _ := json.Marshal(map[string]string{"text": text})
				if err := tx.PutItem(ctx, dialect.ItemRow{Namespace: ns, Key: key, Value: string(value), CreatedAt: now, UpdatedAt: now}, now); err != nil {
					return err
				}
				row := dialect.VectorRow{Path: "$", Digest: "bench", Vector: encodeVector(vectors[j])}
				if err := tx.SetItemVectors(ctx, ns, key, []dialect.VectorRow{row}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutWithIndex puts items of two indexed fields (text and
// title) through a scripted embedding API over loopback and reports the
// embedding requests and input tokens per put: a new item, then the same
// item put again unchanged, which asks for nothing.
//
//	go test -run '^$' -bench BenchmarkPutWithIndex ./internal/store/
func BenchmarkPutWithIndex(b *testing.B) {
	const items = 4096
	vectors := map[string][]float32{}
	text := func(i int) string {
		return "note " + strconv.Itoa(i) + " about the customer's order and its delivery date"
	}
	title := func(i int) string { return "note " + strconv.Itoa(i) }
	for i := range items {
		vectors[text(i)] = []float32{1, float32(i), 0, 0}
		vectors[title(i)] = []float32{0, 1, float32(i), 0}
	}
	srv := embedtest.New(b, vectors)
	env := map[string]string{models.EnvCompatibleBaseURL: srv.URL}
	emb, err := models.NewEmbedder("openai-compatible:embed-4", func(k string) string { return env[k] }, nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := OpenWith(filepath.Join(b.TempDir(), "dawn.db"), Options{Index: &Index{Embedder: emb, Model: emb.Spec(), Dims: 4, Fields: []string{"text", "title"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	for _, again := range []bool{false, true} {
		name := "new"
		if again {
			name = "unchanged"
		}
		b.Run(name, func(b *testing.B) {
			requests, tokens := emb.Usage()
			i := 0
			for b.Loop() {
				n := i % items
				i++
				value, _ := json.Marshal(map[string]string{"text": text(n), "title": title(n)})
				must(b, s.PutItem(ctx, []string{"notes"}, "k"+strconv.Itoa(n), value))
			}
			r, tk := emb.Usage()
			b.ReportMetric(float64(r-requests)/float64(i), "requests/put")
			b.ReportMetric(float64(tk-tokens)/float64(i), "tokens/put")
		})
	}
}
