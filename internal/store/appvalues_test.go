package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestAppValuesSurviveReopen: values kept for the app are there after the
// store is closed and opened again, and a second set replaces a key.
func TestAppValuesSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "dawn.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAppValues(ctx, map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`true`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetAppValues(ctx, map[string]json.RawMessage{"a": json.RawMessage(`2`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetAppValues(ctx, map[string]json.RawMessage{"c": json.RawMessage(`{`)}); err == nil {
		t.Fatal("a value that is not JSON was kept")
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.AppValues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got["a"]) != "2" || string(got["b"]) != "true" {
		t.Fatalf("app values after reopen: %s", mustMarshal(t, got))
	}
}
