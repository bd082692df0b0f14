package dialect

import (
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// ReadMigrations reads the migrations in dir of fsys, named NNNN_what.sql
// and numbered 1, 2, 3... without gaps, in version order.
func ReadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	var list []Migration
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
		list = append(list, Migration{Version: v, Name: base, SQL: string(text)})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Version < list[j].Version })
	for i, m := range list {
		if m.Version != i+1 {
			return nil, fmt.Errorf("store: migration %s: expected version %d (versions must run 1, 2, 3... without gaps)", m.Name, i+1)
		}
	}
	return list, nil
}
