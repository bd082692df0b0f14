package watch

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Batch is one burst of changes, reported once the burst has gone quiet.
type Batch struct {
	// Paths are the changed files and folders, absolute, sorted and
	// deduplicated. A new folder brings every file already in it.
	Paths []string
	// First is when the first change of the burst was seen, so
	// time.Since(First) is how long after an edit its effect landed.
	First time.Time
}

// Options configure Changes.
type Options struct {
	// Debounce is how long the tree must be quiet before a batch is
	// reported (default 50ms).
	Debounce time.Duration
	// MaxDelay bounds how long a batch waits while changes keep coming
	// (default ten debounces, at least 500ms).
	MaxDelay time.Duration
	// Keep, when set, drops every change to a path (relative to the watched
	// folder) that it returns false for, on top of Ignored. A dropped change
	// neither starts nor delays a batch.
	Keep func(rel string) bool
	// Ready, when set, is called once every folder present at the start is
	// watched: an edit after it is seen.
	Ready func()
}

func (o Options) withDefaults() Options {
	if o.Debounce <= 0 {
		o.Debounce = 50 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = max(10*o.Debounce, 500*time.Millisecond)
	}
	return o
}

// Changes watches dir and every folder below it, new ones included, and
// calls onBatch on the watching goroutine for each burst of changes. Changes
// that only touch a file's mode or times are not reported. It returns nil
// when ctx ends, or an error if dir cannot be watched.
func Changes(ctx context.Context, dir string, opts Options, onBatch func(Batch)) error {
	opts = opts.withDefaults()
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	t := &tree{w: w, root: root, keep: opts.Keep}
	if err := t.add(root, nil); err != nil {
		return err
	}
	if opts.Ready != nil {
		opts.Ready()
	}
	b := newBurst(opts)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			t.event(ev, b.note)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				b.note(root) // changes were lost: report that something changed
			}
		case <-b.timer.C:
			b.flush(onBatch)
		}
	}
}

// burst gathers the changes of one burst until it goes quiet: Debounce
// after the last change, and at most MaxDelay after the first.
type burst struct {
	opts    Options
	pending []string
	first   time.Time
	timer   *time.Timer
}

func newBurst(opts Options) *burst {
	b := &burst{opts: opts, timer: time.NewTimer(time.Hour)}
	b.timer.Stop()
	return b
}

// note adds a changed path to the burst and sets when it is reported.
func (b *burst) note(path string) {
	now := time.Now()
	if len(b.pending) == 0 {
		b.first = now
	}
	b.pending = append(b.pending, path)
	b.timer.Reset(min(b.opts.Debounce, time.Until(b.first.Add(b.opts.MaxDelay))))
}

// flush reports the burst's paths, sorted and deduplicated, if it has any,
// and starts the next burst.
func (b *burst) flush(onBatch func(Batch)) {
	if len(b.pending) == 0 {
		return
	}
	slices.Sort(b.pending)
	onBatch(Batch{Paths: slices.Compact(b.pending), First: b.first})
	b.pending = nil
}

// tree adds folders under root to a watcher.
type tree struct {
	w    *fsnotify.Watcher
	root string
	keep func(rel string) bool
}

// event keeps the watches in step with one fsnotify event and passes the
// paths it changed that count to note. Mode and time changes are dropped.
func (t *tree) event(ev fsnotify.Event, note func(string)) {
	if ev.Op == fsnotify.Chmod {
		return
	}
	if ev.Has(fsnotify.Rename) || ev.Has(fsnotify.Remove) {
		t.forget(ev.Name) // a folder moved away keeps stale watches otherwise
	}
	if ev.Has(fsnotify.Create) && t.countsFolder(ev.Name) {
		_ = t.add(ev.Name, note) // a new folder: watch it and report what is in it
	}
	if t.counts(ev.Name) {
		note(ev.Name)
	}
}

// counts reports whether a change to path is reported.
func (t *tree) counts(path string) bool {
	rel, err := filepath.Rel(t.root, path)
	if err != nil || rel == "." {
		return err == nil
	}
	return !Ignored(rel) && (t.keep == nil || t.keep(rel))
}

// add watches the folder at path and every folder below it that counts,
// and passes each file in them to found (when not nil). A path that is not
// a folder is left alone.
func (t *tree) add(path string, found func(string)) error {
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == path && found == nil {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			if found != nil && p != path && t.counts(p) {
				found(p)
			}
			return nil
		}
		if p != t.root && !t.countsFolder(p) {
			return filepath.SkipDir
		}
		return t.w.Add(p)
	})
}

// forget stops watching path and every folder below it. fsnotify keeps the
// old names of folders moved within the tree; forgetting them lets the
// Create event at the new name watch them again under that name.
func (t *tree) forget(path string) {
	prefix := path + string(filepath.Separator)
	for _, p := range t.w.WatchList() {
		if p == path || strings.HasPrefix(p, prefix) {
			_ = t.w.Remove(p)
		}
	}
}

// countsFolder reports whether a folder is watched: Keep filters files, so
// only Ignored applies to folders.
func (t *tree) countsFolder(path string) bool {
	rel, err := filepath.Rel(t.root, path)
	return err == nil && !Ignored(rel)
}
