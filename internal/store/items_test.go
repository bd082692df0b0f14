package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// TestItems: the key-value store keeps, replaces, finds and deletes items
// by namespace and key, on every kind of store.
func TestItems(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		put := func(ns []string, key, value string) {
			t.Helper()
			must(t, s.PutItem(ctx, ns, key, json.RawMessage(value)))
		}
		put([]string{"memories", "a"}, "color", `{"text":"Favorite color is Blue","kind":"pref"}`)
		put([]string{"memories", "a"}, "pet", `{"text":"Has a cat named Tom","kind":"fact"}`)
		put([]string{"memories", "b"}, "color", `{"text":"likes red","kind":"pref"}`)
		put([]string{"other"}, "x", `{"text":"blue sky"}`)

		first, err := s.GetItem(ctx, []string{"memories", "a"}, "color")
		must(t, err)
		put([]string{"memories", "a"}, "color", `{"text":"Favorite color is green","kind":"pref"}`)
		got, err := s.GetItem(ctx, []string{"memories", "a"}, "color")
		must(t, err)
		if string(got.Value) != `{"text":"Favorite color is green","kind":"pref"}` || !got.CreatedAt.Equal(first.CreatedAt) || !got.UpdatedAt.After(first.UpdatedAt) {
			t.Fatalf("replaced item: %+v (first %+v)", got, first)
		}
		if _, err := s.GetItem(ctx, []string{"memories", "a"}, "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing item: %v", err)
		}

		keys := func(q ItemQuery) []string {
			t.Helper()
			items, err := s.SearchItems(ctx, q)
			must(t, err)
			var out []string
			for _, it := range items {
				out = append(out, it.Namespace[len(it.Namespace)-1]+"/"+it.Key)
			}
			return out
		}
		for _, c := range []struct {
			name string
			q    ItemQuery
			want []string
		}{
			{"prefix, newest first", ItemQuery{Prefix: []string{"memories"}}, []string{"a/color", "b/color", "a/pet"}},
			{"all", ItemQuery{}, []string{"a/color", "other/x", "b/color", "a/pet"}},
			{"filter", ItemQuery{Prefix: []string{"memories"}, Filter: map[string]json.RawMessage{"kind": json.RawMessage(`"pref"`)}}, []string{"a/color", "b/color"}},
			{"query is case-insensitive text", ItemQuery{Query: "TOM"}, []string{"a/pet"}},
			{"best match first", ItemQuery{Query: "green color"}, []string{"a/color"}},
			{"query any word", ItemQuery{Query: "blue red"}, []string{"other/x", "b/color"}},
			{"limit and offset", ItemQuery{Prefix: []string{"memories"}, Limit: 1, Offset: 1}, []string{"b/color"}},
			{"a label is whole", ItemQuery{Prefix: []string{"memo"}}, nil},
		} {
			if got := keys(c.q); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}

		nss, err := s.ListNamespaces(ctx, NamespaceQuery{})
		must(t, err)
		if want := [][]string{{"memories", "a"}, {"memories", "b"}, {"other"}}; !reflect.DeepEqual(nss, want) {
			t.Errorf("namespaces: %v", nss)
		}
		nss, err = s.ListNamespaces(ctx, NamespaceQuery{Prefix: []string{"memories"}, MaxDepth: 1})
		must(t, err)
		if want := [][]string{{"memories"}}; !reflect.DeepEqual(nss, want) {
			t.Errorf("namespaces cut to depth 1: %v", nss)
		}
		nss, err = s.ListNamespaces(ctx, NamespaceQuery{Suffix: []string{"b"}})
		must(t, err)
		if want := [][]string{{"memories", "b"}}; !reflect.DeepEqual(nss, want) {
			t.Errorf("namespaces by suffix: %v", nss)
		}

		must(t, s.DeleteItem(ctx, []string{"memories", "a"}, "color"))
		must(t, s.DeleteItem(ctx, []string{"memories", "a"}, "color"))
		if _, err := s.GetItem(ctx, []string{"memories", "a"}, "color"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted item: %v", err)
		}
	})
}

// TestItemsRefuseBadInput: a namespace, key or value a client could not
// name or read back is refused before anything is written.
func TestItemsRefuseBadInput(t *testing.T) {
	s := openTest(t, ":memory:")
	ctx := context.Background()
	for _, c := range []struct {
		ns    []string
		key   string
		value string
	}{
		{nil, "k", `{}`},
		{[]string{"a.b"}, "k", `{}`},
		{[]string{""}, "k", `{}`},
		{[]string{"a\x1f"}, "k", `{}`},
		{[]string{"a"}, "", `{}`},
		{[]string{"a"}, "k", `[1]`},
		{[]string{"a"}, "k", `"text"`},
	} {
		if err := s.PutItem(ctx, c.ns, c.key, json.RawMessage(c.value)); !errors.Is(err, ErrInvalid) {
			t.Errorf("PutItem(%q, %q, %s): %v, want ErrInvalid", c.ns, c.key, c.value, err)
		}
	}
	items, err := s.SearchItems(ctx, ItemQuery{})
	must(t, err)
	if len(items) != 0 {
		t.Fatalf("refused puts kept %d items", len(items))
	}
}
