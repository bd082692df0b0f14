package langgraph_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/embedtest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The texts of the search-by-meaning test: goods means the query and
// holds none of its words; privacy shares the word "policy" only.
const (
	meaningGoods   = "Customers can send purchases back within 30 days and get their money back"
	meaningPrivacy = "Our privacy policy explains which cookies we keep"
	meaningQuery   = "refund policy"
)

// meaningApp is an app whose Store embeds the text field of items with a
// scripted embedding model served over loopback, on SQLite or on
// Postgres; it returns the API's URL, the model and the telemetry
// reader.
func meaningApp(t *testing.T, storePath string) (string, *embedtest.Server, *sdkmetric.ManualReader) {
	t.Helper()
	srv := embedtest.New(t, map[string][]float32{
		meaningGoods:   {0.9, 0.1, 0},
		meaningPrivacy: {0, 0.1, 1},
		meaningQuery:   {1, 0, 0.1},
	})
	dir := supportApp(t)
	yaml := "store:\n  index:\n    embed: openai-compatible:embed-3\n    dims: 3\n    fields: [text]\n"
	if err := os.WriteFile(filepath.Join(dir, "dawn.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	tel := telemetry.New(sdktrace.NewTracerProvider(), sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), telemetry.Options{})
	env := map[string]string{models.EnvCompatibleBaseURL: srv.URL, models.EnvRetries: "0"}
	h := apptest.New(t, dir, dawntest.Script(), apptest.Options{StorePath: storePath, Telemetry: tel, Env: func(k string) string { return env[k] }})
	return h.Serve(t), srv, reader
}

// TestStoreSearchByMeaning: with store.index in dawn.yaml, POST
// /store/items/search with a query ranks the item that means it first
// and returns LangGraph's score; the embedding requests are counted in
// telemetry; a put the model cannot embed is a 502 that keeps nothing.
func TestStoreSearchByMeaning(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { storeSearchByMeaning(t, filepath.Join(t.TempDir(), "dawn.db")) })
	t.Run("postgres", func(t *testing.T) { storeSearchByMeaning(t, pgtest.Database(t)) })
}

func storeSearchByMeaning(t *testing.T, storePath string) {
	url, srv, reader := meaningApp(t, storePath)
	for key, text := range map[string]string{"goods": meaningGoods, "privacy": meaningPrivacy} {
		if status, body := storeCall(t, "PUT", url+"/store/items", `{"namespace":["docs"],"key":"`+key+`","value":{"text":"`+text+`"}}`); status != 204 {
			t.Fatalf("PUT %s: %d %s", key, status, body)
		}
	}
	status, body := storeCall(t, "POST", url+"/store/items/search", `{"namespace_prefix":["docs"],"query":"`+meaningQuery+`","limit":1}`)
	var found struct {
		Items []struct {
			Key   string   `json:"key"`
			Score *float64 `json:"score"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &found); status != 200 || err != nil {
		t.Fatalf("search: %d %s (%v)", status, body, err)
	}
	if len(found.Items) != 1 || found.Items[0].Key != "goods" || found.Items[0].Score == nil || *found.Items[0].Score != 0.5 {
		t.Fatalf("search %q = %s, want goods alone with score 0.5", meaningQuery, body)
	}

	status, body = storeCall(t, "PUT", url+"/store/items", `{"namespace":["docs"],"key":"x","value":{"text":"a text the model has no vector for"}}`)
	if status != 502 || !strings.Contains(body, "embedding_failed") || !strings.Contains(body, "store.index.embed") {
		t.Errorf("PUT the model cannot embed: %d %s, want 502 embedding_failed naming store.index.embed", status, body)
	}
	if status, body := storeCall(t, "GET", url+"/store/items?namespace=docs&key=x", ""); status != 200 || body != "null\n" {
		t.Errorf("a put that failed to embed kept its item: %d %s", status, body)
	}

	// Two puts and one search, one request each: 13 + 8 + 2 words; the
	// failed put counts a request and no tokens.
	if calls := len(srv.Calls()); calls != 4 {
		t.Errorf("%d embedding requests, want 4", calls)
	}
	requests, tokens := embeddingMetrics(t, reader)
	if requests != 4 || tokens != 23 {
		t.Errorf("telemetry: %d embedding requests and %d input tokens, want 4 and 23", requests, tokens)
	}
}

// embeddingMetrics returns the count of embedding calls and the input
// tokens telemetry recorded.
func embeddingMetrics(t *testing.T, reader *sdkmetric.ManualReader) (requests, tokens int64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	embeddings := func(set attribute.Set) bool {
		op, _ := set.Value(telemetry.AttrOperation)
		return op.AsString() == "embeddings"
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					if m.Name == "gen_ai.client.operation.duration" && embeddings(p.Attributes) {
						requests += int64(p.Count)
					}
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					if m.Name == "gen_ai.client.token.usage" && embeddings(p.Attributes) {
						tokens += p.Sum
					}
				}
			}
		}
	}
	return requests, tokens
}
