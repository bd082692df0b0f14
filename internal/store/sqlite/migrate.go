package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"strconv"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// loadMigrations reads the embedded migrations.
func loadMigrations() ([]dialect.Migration, error) {
	return dialect.ReadMigrations(migrationFiles, "migrations")
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
func applyMigration(ctx context.Context, db *sql.Conn, m dialect.Migration, latest int) error {
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
	if have >= m.Version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(m.Version)); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	return tx.Commit()
}
