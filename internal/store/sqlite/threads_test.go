package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/store/sqlite"
)

func TestMigrationsAndVersion(t *testing.T) {
	list, err := sqlite.LoadMigrations()
	must(t, err)
	path := filepath.Join(t.TempDir(), "dawn.db")
	s, d := openTest(t, path)
	var v int
	must(t, d.Peek(context.Background(), "PRAGMA user_version", nil, &v))
	if v != len(list) {
		t.Errorf("user_version = %d, want %d", v, len(list))
	}
	_, err = d.Writer().ExecContext(context.Background(), "PRAGMA user_version = 999")
	must(t, err)
	must(t, s.Close())

	_, err = sqlite.Open(path)
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), path) {
		t.Errorf("Open of a newer schema = %v, want an error naming the path and the version", err)
	}
}
