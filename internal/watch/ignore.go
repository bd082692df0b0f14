package watch

import (
	"path/filepath"
	"strings"
)

// ignoredFolders are folders whose contents never count as a change: Dawn's
// own data (.dawn holds the SQLite store and its write-ahead log, and the
// binaries dawn dev builds), version control and JavaScript packages.
var ignoredFolders = map[string]bool{".dawn": true, ".git": true, ".hg": true, ".svn": true, "node_modules": true}

// ignoredSuffixes end the names of files that editors and SQLite write
// beside the real ones: backups ("~", .bak, .orig), swap files (vim, kate),
// temporary copies (.tmp, JetBrains' safe write, browser editors) and
// SQLite's -wal, -shm and -journal files.
var ignoredSuffixes = []string{
	"~", ".bak", ".orig",
	".swp", ".swx", ".swo", ".kate-swp",
	".tmp", "___jb_tmp___", "___jb_old___", ".crswap",
	"-wal", "-shm", "-journal",
}

// Ignored reports whether a change to path should not count: editor swap,
// backup and temporary files, SQLite side files, and anything inside .dawn,
// .git, .hg, .svn or node_modules. Watch passes paths relative to the watched
// folder, so the folders above it do not matter.
func Ignored(path string) bool {
	base := filepath.Base(path)
	switch {
	case base == "4913", base == ".DS_Store", base == "Thumbs.db",
		strings.HasPrefix(base, ".#"),
		strings.HasPrefix(base, ".goutputstream-"),
		len(base) > 1 && strings.HasPrefix(base, "#") && strings.HasSuffix(base, "#"):
		return true
	}
	for _, s := range ignoredSuffixes {
		if strings.HasSuffix(base, s) {
			return true
		}
	}
	for rest := filepath.ToSlash(path); rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		if ignoredFolders[part] {
			return true
		}
	}
	return false
}
