package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// Limits of the file tools and the virtual tree.
const (
	// MaxFileSize bounds a file the tools read or write: 256 KiB.
	MaxFileSize = 256 << 10
	// MaxTreeSize bounds the contents of a thread's virtual tree, all files
	// together: 1 MiB. The tree is saved with every step of a run.
	MaxTreeSize = 1 << 20
	// MaxTreeFiles bounds the number of files in a virtual tree.
	MaxTreeFiles = 500
	// MaxListed bounds the entries listDir and glob return, and the files
	// GET /threads/:id/files lists.
	MaxListed = 1000
)

// Entry is a file or folder of a workspace.
type Entry struct {
	// Path is the workspace path (see Clean).
	Path string `json:"path"`
	// Dir is true for a folder.
	Dir bool `json:"-"`
	// Size is the file's length in bytes; 0 for a folder.
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified_at"`
}

// backend is where a workspace's files live. Every name has been through
// CleanFile (or Clean for readDir).
type backend interface {
	read(name string) ([]byte, error)
	write(name string, data []byte) error
	readDir(name string) ([]Entry, error)
	// files returns every file, sorted by path, at most MaxListed+1. It
	// stops with ctx's error when ctx ends.
	files(ctx context.Context) ([]Entry, error)
}

// Errors the backends return, wrapped with the path.
var (
	errNotFound = errors.New("does not exist")
	errIsDir    = errors.New("is a folder")
	errNotDir   = errors.New("is a file, not a folder")
)

func notFound(name string) error {
	return fmt.Errorf("%q %w; listDir or glob show the workspace's files", name, errNotFound)
}

func tooBig(name string, size int64) error {
	return fmt.Errorf("file %q is %d bytes, over the %d KiB limit of the workspace's file tools", name, size, MaxFileSize>>10)
}

// File is one file of a thread's virtual tree, as the state field holds it.
type File struct {
	Content  string    `json:"content"`
	Modified time.Time `json:"modified_at"`
}

// Tree is a thread's virtual file tree: files by workspace path. Folders
// exist as long as a file is in them.
type Tree map[string]File

// treeBackend is a Tree the tools change in place; the tool hands the
// changed tree back as the state update.
type treeBackend struct {
	tree Tree
	now  func() time.Time
}

func (b *treeBackend) read(name string) ([]byte, error) {
	f, ok := b.tree[name]
	if !ok {
		if b.isDir(name) {
			return nil, fmt.Errorf("%q %w; listDir shows what is in it", name, errIsDir)
		}
		return nil, notFound(name)
	}
	return []byte(f.Content), nil
}

// isDir reports whether some file lies under folder name.
func (b *treeBackend) isDir(name string) bool {
	if name == "." {
		return true
	}
	for p := range b.tree {
		if strings.HasPrefix(p, name+"/") {
			return true
		}
	}
	return false
}

func (b *treeBackend) write(name string, data []byte) error {
	if len(data) > MaxFileSize {
		return tooBig(name, int64(len(data)))
	}
	if b.isDir(name) {
		return fmt.Errorf("%q %w; write to a file inside it or pick another name", name, errIsDir)
	}
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if _, ok := b.tree[dir]; ok {
			return fmt.Errorf("cannot write %q: %q %w", name, dir, errNotDir)
		}
	}
	old, exists := b.tree[name]
	if !exists && len(b.tree) >= MaxTreeFiles {
		return fmt.Errorf("the workspace holds %d files, its limit; overwrite or edit an existing file instead", MaxTreeFiles)
	}
	total := int64(len(data)) - int64(len(old.Content))
	for _, f := range b.tree {
		total += int64(len(f.Content))
	}
	if total > MaxTreeSize {
		return fmt.Errorf("writing %q would bring the workspace to %d bytes, over its %d KiB limit; write less or shorten other files", name, total, MaxTreeSize>>10)
	}
	b.tree[name] = File{Content: string(data), Modified: b.now().UTC()}
	return nil
}

func (b *treeBackend) readDir(name string) ([]Entry, error) {
	if _, ok := b.tree[name]; ok {
		return nil, fmt.Errorf("%q %w; readFile reads it", name, errNotDir)
	}
	if !b.isDir(name) {
		return nil, notFound(name)
	}
	prefix := name + "/"
	if name == "." {
		prefix = ""
	}
	seen := map[string]bool{}
	var out []Entry
	for p, f := range b.tree {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		child, _, deeper := strings.Cut(rest, "/")
		if seen[child] {
			continue
		}
		seen[child] = true
		if deeper {
			out = append(out, Entry{Path: prefix + child, Dir: true})
		} else {
			out = append(out, Entry{Path: p, Size: int64(len(f.Content)), Modified: f.Modified})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func (b *treeBackend) files(context.Context) ([]Entry, error) {
	out := make([]Entry, 0, len(b.tree))
	for p, f := range b.tree {
		out = append(out, Entry{Path: p, Size: int64(len(f.Content)), Modified: f.Modified})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// rootBackend is a real folder. Every name is opened through os.Root, so
// no path, symlink included, reaches outside it.
type rootBackend struct {
	root *os.Root
}

func (b *rootBackend) read(name string) ([]byte, error) {
	// Stat before opening: opening a named pipe would block.
	if info, err := b.root.Stat(name); err != nil {
		return nil, rootErr(name, err)
	} else if !info.IsDir() && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%q is not a regular file", name)
	}
	f, err := b.root.Open(name)
	if err != nil {
		return nil, rootErr(name, err)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, rootErr(name, err)
	case info.IsDir():
		return nil, fmt.Errorf("%q %w; listDir shows what is in it", name, errIsDir)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("%q is not a regular file", name)
	case info.Size() > MaxFileSize:
		return nil, tooBig(name, info.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, rootErr(name, err)
	}
	if len(data) > MaxFileSize {
		return nil, tooBig(name, int64(len(data)))
	}
	return data, nil
}

func (b *rootBackend) write(name string, data []byte) error {
	if len(data) > MaxFileSize {
		return tooBig(name, int64(len(data)))
	}
	if dir := path.Dir(name); dir != "." {
		if err := b.root.MkdirAll(dir, 0o755); err != nil {
			return rootErr(name, err)
		}
	}
	if info, err := b.root.Stat(name); err == nil && info.IsDir() {
		return fmt.Errorf("%q %w; write to a file inside it or pick another name", name, errIsDir)
	} else if err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("%q is not a regular file; pick another name", name)
	}
	return rootErr(name, b.root.WriteFile(name, data, 0o644))
}

func (b *rootBackend) readDir(name string) ([]Entry, error) {
	list, err := fs.ReadDir(b.root.FS(), name)
	if err != nil {
		if info, serr := b.root.Stat(name); serr == nil && !info.IsDir() {
			return nil, fmt.Errorf("%q %w; readFile reads it", name, errNotDir)
		}
		return nil, rootErr(name, err)
	}
	out := make([]Entry, 0, len(list))
	for _, d := range list {
		p := path.Join(name, d.Name())
		// Stat through the root: a symlink that leads outside it fails
		// and is left out.
		info, err := b.root.Stat(p)
		if err != nil {
			continue
		}
		e := Entry{Path: p, Dir: info.IsDir(), Modified: info.ModTime().UTC()}
		if !e.Dir {
			e.Size = info.Size()
		}
		out = append(out, e)
		if len(out) > MaxListed {
			break
		}
	}
	return out, nil
}

func (b *rootBackend) files(ctx context.Context) ([]Entry, error) {
	var out []Entry
	err := fs.WalkDir(b.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		// A walk of a deep or wide folder can outlast the call's deadline;
		// it stops then rather than work on for nobody.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("the walk of the workspace folder stopped: %w", err)
		}
		if err != nil || d.IsDir() {
			return nil // an unreadable folder is left out
		}
		info, err := b.root.Stat(p)
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		out = append(out, Entry{Path: p, Size: info.Size(), Modified: info.ModTime().UTC()})
		if len(out) > MaxListed {
			return fs.SkipAll
		}
		return nil
	})
	return out, err
}

// rootErr words an error of os.Root for the model, without the host path.
func rootErr(name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return notFound(name)
	case strings.Contains(err.Error(), "path escapes from parent"):
		return fmt.Errorf("%q leads out of the workspace through a symbolic link; it cannot be used", name)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q: permission denied", name)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%q: %s failed: %v", name, pe.Op, pe.Err)
	}
	return fmt.Errorf("%q: %v", name, err)
}
