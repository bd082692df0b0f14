package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestAssistantsKeep: an assistant is created at version 1, found by
// graph, name and metadata, counted, updated into version 2, set back to
// version 1 (its versions stay) and deleted with its versions; a taken
// id, an unknown one and an unknown version are refused.
func TestAssistantsKeep(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := Assistant{ID: "a1", GraphID: "/chat", Name: "Chat Bot", Config: json.RawMessage(`{"configurable": {"model": "openai:gpt-4o"}}`), Metadata: json.RawMessage(`{"team":"red"}`)}
		b := Assistant{ID: "a2", GraphID: "/other", Name: "other", Metadata: json.RawMessage(`{"team":"blue"}`)}
		for _, x := range []Assistant{a, b} {
			got, err := s.CreateAssistant(ctx, x)
			must(t, err)
			if got.Version != 1 || got.CreatedAt.IsZero() {
				t.Fatalf("created %+v", got)
			}
		}
		if _, err := s.CreateAssistant(ctx, a); !errors.Is(err, ErrExists) {
			t.Fatalf("a second a1: %v, want ErrExists", err)
		}
		checkAssistantSearch(t, s)
		checkAssistantVersions(t, s)
		must(t, s.DeleteAssistant(ctx, "a1"))
		if _, err := s.GetAssistant(ctx, "a1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleted a1: %v", err)
		}
		if vs, _ := s.AssistantVersions(ctx, "a1", AssistantQuery{}); len(vs) != 0 {
			t.Errorf("versions of deleted a1: %+v", vs)
		}
		if err := s.DeleteAssistant(ctx, "a1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleting a1 again: %v", err)
		}
		if _, err := s.UpdateAssistant(ctx, "nope", func(*Assistant) error { return nil }); !errors.Is(err, ErrNotFound) {
			t.Errorf("update nope: %v", err)
		}
	})
}

// checkAssistantSearch: a1 (/chat, "Chat Bot", team red) and a2 (/other,
// team blue) are found by graph, name and metadata, sorted and paged.
func checkAssistantSearch(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct {
		q    AssistantQuery
		want []string
	}{
		{AssistantQuery{}, []string{"a1", "a2"}},
		{AssistantQuery{GraphID: "/chat"}, []string{"a1"}},
		{AssistantQuery{Name: "bot"}, []string{"a1"}},
		{AssistantQuery{Metadata: json.RawMessage(`{"team":"blue"}`)}, []string{"a2"}},
		{AssistantQuery{SortBy: "name", SortOrder: "desc"}, []string{"a2", "a1"}},
		{AssistantQuery{Limit: 1, Offset: 1}, []string{"a2"}},
	} {
		got, err := s.SearchAssistants(ctx, c.q)
		must(t, err)
		var ids []string
		for _, x := range got {
			ids = append(ids, x.ID)
		}
		if len(ids) != len(c.want) || (len(ids) > 0 && ids[0] != c.want[0]) {
			t.Errorf("search %+v: %v, want %v", c.q, ids, c.want)
		}
		if c.q.Limit == 0 && c.q.SortBy == "" {
			n, err := s.CountAssistants(ctx, c.q)
			must(t, err)
			if n != len(c.want) {
				t.Errorf("count %+v: %d, want %d", c.q, n, len(c.want))
			}
		}
	}
	if _, err := s.SearchAssistants(ctx, AssistantQuery{SortBy: "color"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("sort_by color: %v, want ErrInvalid", err)
	}
}

// checkAssistantVersions: an update of a1 is version 2, which keeps its
// graph; set latest goes back to version 1; the next update is version 3.
func checkAssistantVersions(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	up, err := s.UpdateAssistant(ctx, "a1", func(x *Assistant) error {
		x.Name, x.GraphID = "Chat Bot 2", "/elsewhere"
		return nil
	})
	must(t, err)
	if up.Version != 2 || up.Name != "Chat Bot 2" || up.GraphID != "/chat" || string(up.Metadata) != `{"team":"red"}` {
		t.Fatalf("updated %+v", up)
	}
	vs, err := s.AssistantVersions(ctx, "a1", AssistantQuery{})
	must(t, err)
	if len(vs) != 2 || vs[0].Version != 2 || vs[1].Version != 1 || vs[1].Name != "Chat Bot" {
		t.Fatalf("versions %+v", vs)
	}
	back, err := s.SetLatestAssistant(ctx, "a1", 1)
	must(t, err)
	if back.Version != 1 || back.Name != "Chat Bot" {
		t.Fatalf("set latest 1: %+v", back)
	}
	if got, _ := s.GetAssistant(ctx, "a1"); got.Version != 1 {
		t.Fatalf("after set latest: %+v", got)
	}
	// The next update is a new version above every kept one.
	up, err = s.UpdateAssistant(ctx, "a1", func(*Assistant) error { return nil })
	must(t, err)
	if up.Version != 3 {
		t.Fatalf("update after set latest: version %d, want 3", up.Version)
	}
	if _, err := s.SetLatestAssistant(ctx, "a1", 9); !errors.Is(err, ErrNotFound) {
		t.Errorf("version 9: %v, want ErrNotFound", err)
	}
}

// TestPatchThreadMetadata: a patch sets its members and keeps the others.
func TestPatchThreadMetadata(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.CreateThread(ctx, "t1", json.RawMessage(`{"a":1,"b":{"x":1}}`))
		must(t, err)
		got, err := s.PatchThreadMetadata(ctx, "t1", json.RawMessage(`{"b":{"y":2},"c":"new"}`))
		must(t, err)
		var meta map[string]any
		must(t, json.Unmarshal(got.Metadata, &meta))
		if meta["a"] != float64(1) || meta["c"] != "new" || len(meta["b"].(map[string]any)) != 1 {
			t.Fatalf("merged metadata %s", got.Metadata)
		}
		if _, err := s.PatchThreadMetadata(ctx, "nope", json.RawMessage(`{}`)); !errors.Is(err, ErrNotFound) {
			t.Errorf("patch nope: %v", err)
		}
		if _, err := s.PatchThreadMetadata(ctx, "t1", json.RawMessage(`[1]`)); !errors.Is(err, ErrInvalid) {
			t.Errorf("patch [1]: %v", err)
		}
	})
}
