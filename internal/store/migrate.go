package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema change from the migrations folder.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded SQLite migrations (see readMigrations).
func loadMigrations() ([]migration, error) {
	return readMigrations(migrationFiles, "migrations")
}

// readMigrations reads the migrations in dir of fsys, named NNNN_what.sql
// and numbered 1, 2, 3... without gaps, in version order.
func readMigrations(fsys fs.FS, dir string) ([]migration, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	var list []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, dir+"/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("store: migration %s: name must start with a positive number and '_'", name)
		}
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		list = append(list, migration{version: v, name: base, sql: string(text)})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].version < list[j].version })
	for i, m := range list {
		if m.version != i+1 {
			return nil, fmt.Errorf("store: migration %s: expected version %d (versions must run 1, 2, 3... without gaps)", m.name, i+1)
		}
	}
	return list, nil
}

// migrate brings the schema of db up to date. The version lives in PRAGMA
// user_version, and each migration runs in one write transaction together
// with its version bump, so a crash or a second process opening the same
// file at once never applies a migration twice or half.
func migrate(ctx context.Context, db *sql.Conn) error {
	list, err := loadMigrations()
	if err != nil {
		return err
	}
	for _, m := range list {
		if err := applyMigration(ctx, db, m, len(list)); err != nil {
			return err
		}
	}
	return nil
}

// applyMigration runs m unless the database already has it.
func applyMigration(ctx context.Context, db *sql.Conn, m migration, latest int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return err
	}
	if have > latest {
		return fmt.Errorf("schema version %d is newer than this build of dawn knows (%d): upgrade dawn or use another store file", have, latest)
	}
	if have >= m.version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(m.version)); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	return tx.Commit()
}
