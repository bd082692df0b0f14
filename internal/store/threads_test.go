package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCreateThreadMetadata(t *testing.T) {
	tests := []struct {
		name     string
		metadata string
		want     string
		err      error
	}{
		{"none", "", "{}", nil},
		{"null", "null", "{}", nil},
		{"object compacted", "{ \"user\" : \"ann\",\n \"tags\": [1, 2] }", `{"user":"ann","tags":[1,2]}`, nil},
		{"array", "[1]", "", ErrInvalid},
		{"string", `"x"`, "", ErrInvalid},
		{"broken", `{"a":`, "", ErrInvalid},
	}
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := "t" + string(rune('a'+i))
				th, err := s.CreateThread(ctx, id, json.RawMessage(tt.metadata))
				if !errors.Is(err, tt.err) {
					t.Fatalf("CreateThread error = %v, want %v", err, tt.err)
				}
				if err != nil {
					if !strings.Contains(err.Error(), id) {
						t.Errorf("error %q does not name the thread", err)
					}
					return
				}
				if string(th.Metadata) != tt.want || th.Status != StatusIdle {
					t.Errorf("created %s %s, want %s idle", th.Metadata, th.Status, tt.want)
				}
				got, err := s.GetThread(ctx, id)
				must(t, err)
				if string(got.Metadata) != tt.want || !got.CreatedAt.Equal(th.CreatedAt) || got.CreatedAt.Location() != time.UTC {
					t.Errorf("GetThread = %+v, want %+v", got, th)
				}
			})
		}
	})
}

func TestThreadLifecycle(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		th, err := s.CreateThread(ctx, "thread-1", json.RawMessage(`{"k":"v"}`))
		must(t, err)

		_, err = s.CreateThread(ctx, "thread-1", nil)
		if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), `"thread-1"`) {
			t.Errorf("second CreateThread = %v, want ErrExists naming the thread", err)
		}
		for _, id := range []string{"", strings.Repeat("x", MaxIDLen+1)} {
			if _, err := s.CreateThread(ctx, id, nil); !errors.Is(err, ErrInvalid) {
				t.Errorf("CreateThread(%d-byte id) = %v, want ErrInvalid", len(id), err)
			}
		}

		b, err := json.Marshal(th)
		must(t, err)
		var shape map[string]any
		must(t, json.Unmarshal(b, &shape))
		created, _ := shape["created_at"].(string)
		if shape["thread_id"] != "thread-1" || shape["status"] != "idle" || !strings.HasSuffix(created, "Z") {
			t.Errorf("thread JSON = %s", b)
		}
		if _, err := time.Parse(time.RFC3339, created); err != nil {
			t.Errorf("created_at %q is not RFC 3339: %v", created, err)
		}

		must(t, s.DeleteThread(ctx, "thread-1"))
		if _, err := s.GetThread(ctx, "thread-1"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"thread-1"`) {
			t.Errorf("GetThread after delete = %v, want ErrNotFound naming the thread", err)
		}
		if err := s.DeleteThread(ctx, "thread-1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second DeleteThread = %v, want ErrNotFound", err)
		}
	})
}

func TestDeleteThreadRemovesEverything(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		newRun(t, s, "doomed", "run-1")
		newRun(t, s, "kept", "run-2")
		for _, id := range []string{"doomed", "kept"} {
			must(t, s.SaveStep(ctx, sampleStep(id, map[string]string{"doomed": "run-1", "kept": "run-2"}[id], 1, 1)))
		}

		if err := s.DeleteThread(ctx, "doomed"); !errors.Is(err, ErrBusy) {
			t.Fatalf("DeleteThread of a busy thread = %v, want ErrBusy", err)
		}
		must(t, s.FinishRun(ctx, "run-1", RunSuccess, "", nil, nil))
		must(t, s.DeleteThread(ctx, "doomed"))

		// Rows of each table that belong to a thread, by the thread's id.
		counts := map[string]string{
			"threads":  `SELECT count(*) FROM threads WHERE id = ?`,
			"runs":     `SELECT count(*) FROM runs WHERE thread IN (SELECT pk FROM threads WHERE id = ?)`,
			"messages": `SELECT count(*) FROM history WHERE run = 0 AND thread IN (SELECT pk FROM threads WHERE id = ?)`,
			"events":   `SELECT count(*) FROM history WHERE run IN (SELECT pk FROM runs WHERE id = ?)`,
		}
		for table, query := range counts {
			doomed, keep := "doomed", "kept"
			if table == "events" {
				doomed, keep = "run-1", "run-2"
			}
			gone, kept := queryInt(t, s, query, doomed), queryInt(t, s, query, keep)
			if gone != 0 || kept == 0 {
				t.Errorf("%s: %d rows of the deleted thread left, %d of the other", table, gone, kept)
			}
		}
		// Nothing is left that no thread owns.
		orphans := queryInt(t, s, `SELECT
			(SELECT count(*) FROM runs WHERE thread NOT IN (SELECT pk FROM threads)) +
			(SELECT count(*) FROM history WHERE thread NOT IN (SELECT pk FROM threads)) +
			(SELECT count(*) FROM history WHERE run <> 0 AND run NOT IN (SELECT pk FROM runs))`)
		if orphans != 0 {
			t.Errorf("%d rows left without their thread or run", orphans)
		}
	})
}

func TestOpenErrorNamesPath(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	must(t, os.WriteFile(blocker, []byte("x"), 0o644))
	notDB := filepath.Join(dir, "notdb.db")
	must(t, os.WriteFile(notDB, []byte(strings.Repeat("this is not a database ", 200)), 0o644))

	for _, path := range []string{filepath.Join(blocker, "dawn.db"), notDB, ""} {
		s, err := Open(path)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", path)
			continue
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("Open(%q) error %q does not name the path", path, err)
		}
	}
}

func TestOpenOddPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%d e", "dawn.db")
	s := openTest(t, path)
	_, err := s.CreateThread(context.Background(), "x", nil)
	must(t, err)
	must(t, s.Close())
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the given path: %v", err)
	}
}

func TestReopenKeepsSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dawn.db")
	for i := range 3 {
		s := openTest(t, path)
		_, err := s.CreateThread(context.Background(), string(rune('a'+i)), nil)
		must(t, err)
		n, _, err := s.Stats(context.Background())
		must(t, err)
		if n != i+1 {
			t.Errorf("open %d: %d threads, want %d", i, n, i+1)
		}
		must(t, s.Close())
	}
}

func TestWriteAfterClose(t *testing.T) {
	for _, k := range kinds {
		s, err := Open(k.path(t))
		must(t, err)
		must(t, s.Close())
		must(t, s.Close())
		if _, err := s.CreateThread(context.Background(), "x", nil); err == nil {
			t.Errorf("%s: CreateThread after Close succeeded", k.name)
		}
	}
}
