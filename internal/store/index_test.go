package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dawn-go/dawn/internal/embedtest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/pgtest"
)

// Texts and vectors of the search-by-meaning tests: the item about
// sending goods back is close to "refund policy" and holds none of its
// words; the privacy notice shares the word "policy" and means something
// else; the opening hours are about neither.
const (
	textGoods   = "Customers can send purchases back within 30 days and get their money back"
	textPrivacy = "Our privacy policy explains which cookies we keep"
	textHours   = "The office is closed on Sundays"
	textQuery   = "refund policy"
	textGoods2  = "Unopened purchases may be sent back for the full price"
)

var meaningVectors = map[string][]float32{
	textGoods:   {0.9, 0.1, 0, 0},
	textGoods2:  {0.8, 0.3, 0, 0},
	textPrivacy: {0, 0.1, 1, 0},
	textHours:   {0, 1, 0, 0.2},
	textQuery:   {1, 0, 0.1, 0},
	// The whole value of an item, when no fields are configured.
	`{"text":"x"}`: {0, 0, 0, 1},
}

// indexedKinds opens a store with an index over the scripted embedding
// server srv on SQLite and on Postgres, and runs fn on each.
func indexedKinds(t *testing.T, fields []string, fn func(t *testing.T, s Store, srv *embedtest.Server)) {
	t.Helper()
	open := func(t *testing.T, dsn string) (Store, *embedtest.Server) {
		srv := embedtest.New(t, meaningVectors)
		env := map[string]string{models.EnvCompatibleBaseURL: srv.URL, models.EnvRetryMaxWait: "10ms"}
		emb, err := models.NewEmbedder("openai-compatible:embed-4", func(k string) string { return env[k] }, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := OpenWith(dsn, Options{Index: &Index{Embedder: emb, Model: emb.Spec(), Dims: 4, Fields: fields, MinSimilarity: DefaultMinSimilarity}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, srv
	}
	t.Run("sqlite", func(t *testing.T) {
		s, srv := open(t, filepath.Join(t.TempDir(), "dawn.db"))
		fn(t, s, srv)
	})
	t.Run("postgres", func(t *testing.T) {
		s, srv := open(t, pgtest.Database(t))
		fn(t, s, srv)
	})
}

func searchKeys(t *testing.T, s Store, q ItemQuery) ([]string, []float64) {
	t.Helper()
	items, err := s.SearchItems(context.Background(), q)
	must(t, err)
	var keys []string
	var scores []float64
	for _, it := range items {
		keys = append(keys, it.Key)
		scores = append(scores, it.Score)
	}
	return keys, scores
}

// TestSearchByMeaning: with an index, a query finds the item that means
// it before the one that only shares a word, fused with the word match;
// filters, prefixes and paging hold as for a word search.
func TestSearchByMeaning(t *testing.T) {
	indexedKinds(t, []string{"text"}, func(t *testing.T, s Store, srv *embedtest.Server) {
		ctx := context.Background()
		ns := []string{"docs", "acme"}
		must(t, s.PutItem(ctx, ns, "goods", json.RawMessage(`{"text":"`+textGoods+`","kind":"faq"}`)))
		must(t, s.PutItem(ctx, ns, "privacy", json.RawMessage(`{"text":"`+textPrivacy+`","kind":"legal"}`)))
		must(t, s.PutItem(ctx, ns, "hours", json.RawMessage(`{"text":"`+textHours+`","kind":"faq"}`)))
		must(t, s.PutItem(ctx, []string{"docs", "other"}, "goods2", json.RawMessage(`{"text":"`+textGoods2+`","kind":"faq"}`)))

		keys, scores := searchKeys(t, s, ItemQuery{Prefix: ns, Query: textQuery})
		// goods is first by meaning; privacy only holds the word
		// "policy"; hours is neither close nor sharing a word.
		if !slices.Equal(keys, []string{"goods", "privacy"}) {
			t.Fatalf("search %q under %v = %v, want [goods privacy]", textQuery, ns, keys)
		}
		// Each is first in one list of two (0.5); the tie goes to the
		// closer meaning.
		if !slices.Equal(scores, []float64{0.5, 0.5}) {
			t.Errorf("scores %v, want [0.5 0.5]", scores)
		}
		keys, _ = searchKeys(t, s, ItemQuery{Prefix: []string{"docs"}, Query: textQuery, Limit: 1})
		if !slices.Equal(keys, []string{"goods"}) {
			t.Errorf("first result under docs = %v, want [goods]", keys)
		}
		// goods2 is second by meaning (1/62), after privacy, first by
		// words (1/61).
		keys, _ = searchKeys(t, s, ItemQuery{Prefix: []string{"docs"}, Query: textQuery, Offset: 2, Limit: 5})
		if !slices.Equal(keys, []string{"goods2"}) {
			t.Errorf("third result on under docs = %v, want [goods2]", keys)
		}
		keys, _ = searchKeys(t, s, ItemQuery{Prefix: []string{"docs"}, Query: textQuery, Filter: map[string]json.RawMessage{"kind": json.RawMessage(`"legal"`)}})
		if !slices.Equal(keys, []string{"privacy"}) {
			t.Errorf("search filtered to kind legal = %v, want [privacy]", keys)
		}
		// A search without a query lists as before, and asks no model.
		before := len(srv.Calls())
		keys, _ = searchKeys(t, s, ItemQuery{Prefix: ns})
		if len(keys) != 3 || len(srv.Calls()) != before {
			t.Errorf("listing: %v, %d embedding calls", keys, len(srv.Calls())-before)
		}
	})
}

// TestIndexEmbedsOnChangeOnly: a put embeds the configured fields in one
// request; putting the same text again asks nothing; a changed text is
// embedded again and found by its new meaning; a deleted item's vectors
// go with it.
func TestIndexEmbedsOnChangeOnly(t *testing.T) {
	indexedKinds(t, []string{"text", "extra"}, func(t *testing.T, s Store, srv *embedtest.Server) {
		ctx := context.Background()
		ns := []string{"docs"}
		must(t, s.PutItem(ctx, ns, "a", json.RawMessage(`{"text":"`+textHours+`","extra":"`+textPrivacy+`"}`)))
		calls := srv.Calls()
		if len(calls) != 1 || !slices.Equal(calls[0].Inputs, []string{textHours, textPrivacy}) {
			t.Fatalf("first put: calls %+v, want one request with both fields", calls)
		}
		must(t, s.PutItem(ctx, ns, "a", json.RawMessage(`{"text":"`+textHours+`","extra":"`+textPrivacy+`","n":2}`)))
		if n := len(srv.Calls()); n != 1 {
			t.Fatalf("a put of unchanged texts made %d requests in all, want 1", n)
		}
		must(t, s.PutItem(ctx, ns, "a", json.RawMessage(`{"text":"`+textGoods+`"}`)))
		calls = srv.Calls()
		if len(calls) != 2 || !slices.Equal(calls[1].Inputs, []string{textGoods}) {
			t.Fatalf("changed put: calls %+v, want a second request with the new text only", calls)
		}
		if n := queryInt(t, s, `SELECT count(*) FROM store_item_vectors`); n != 1 {
			t.Errorf("after the change the item has %d vectors, want 1 (the field that went has none)", n)
		}
		keys, scores := searchKeys(t, s, ItemQuery{Prefix: ns, Query: textQuery})
		if !slices.Equal(keys, []string{"a"}) || scores[0] != 0.5 {
			t.Errorf("after the change: %v %v, want [a] found by meaning alone", keys, scores)
		}
		must(t, s.DeleteItem(ctx, ns, "a"))
		if n := queryInt(t, s, `SELECT count(*) FROM store_item_vectors`); n != 0 {
			t.Errorf("a deleted item left %d vectors", n)
		}
	})
}

// TestIndexRetriesAndFails: a 429 or 5xx of the embedding API is tried
// again; a failure that lasts fails the put with ErrEmbed and writes
// nothing.
func TestIndexRetriesAndFails(t *testing.T) {
	indexedKinds(t, nil, func(t *testing.T, s Store, srv *embedtest.Server) {
		ctx := context.Background()
		srv.FailNext(429, 503)
		must(t, s.PutItem(ctx, []string{"docs"}, "a", json.RawMessage(`{"text":"x"}`)))
		if calls := srv.Calls(); len(calls) != 3 || calls[2].Status != 200 || !slices.Equal(calls[2].Inputs, []string{`{"text":"x"}`}) {
			t.Fatalf("calls %+v: want two failures, then the whole value embedded", calls)
		}
		// The whole value is embedded: {"text":"x"} has no vector in
		// the script, so the server says so; the put fails.
		err := s.PutItem(ctx, []string{"docs"}, "b", json.RawMessage(`{"text":"y"}`))
		if !errors.Is(err, ErrEmbed) {
			t.Fatalf("put with an unknown text: %v, want ErrEmbed", err)
		}
		if _, err := s.GetItem(ctx, []string{"docs"}, "b"); !errors.Is(err, ErrNotFound) {
			t.Errorf("a put whose embedding failed left the item: %v", err)
		}
	})
}
