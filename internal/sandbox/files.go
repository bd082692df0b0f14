package sandbox

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// maxVisited bounds the entries a read looks at, however many files a
// command made.
const maxVisited = 20000

// snapper builds a Snapshot within Limits.
type snapper struct {
	lim     Limits
	snap    Snapshot
	total   int64
	visited int
}

// take decides whether a file of size goes in; false lists it as skipped.
func (s *snapper) take(name string, size int64) bool {
	if size > s.lim.MaxFile || len(s.snap.Files) >= s.lim.MaxFiles || s.total+size > s.lim.MaxTotal {
		s.snap.Skipped = append(s.snap.Skipped, Skipped{Path: name, Size: size})
		return false
	}
	s.total += size
	return true
}

// ReadFS reads the regular files of root within lim, never following a
// symbolic link, and skips pipes, devices and sockets.
func ReadFS(root *os.Root, lim Limits) (Snapshot, error) {
	s := &snapper{lim: lim}
	err := fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder is left out
		}
		if s.visited++; s.visited > maxVisited {
			s.snap.Skipped = append(s.snap.Skipped, Skipped{Path: "(more files than " + fmt.Sprint(maxVisited) + ")"})
			return fs.SkipAll
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || !s.take(name, info.Size()) {
			return nil
		}
		data, err := readRegular(root, name, lim.MaxFile)
		if err != nil {
			return nil // changed under us: left out
		}
		s.snap.Files = append(s.snap.Files, File{Path: name, Data: data})
		return nil
	})
	return s.snap, err
}

// readRegular reads name when it is still a regular file of at most max
// bytes.
func readRegular(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscallNoFollow|syscallNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = errors.New("grew past the limit")
	}
	return data, err
}

// ReadTar reads the regular files of a tar stream within lim, with paths
// relative to the folder the stream was taken of (its first segment is
// dropped, as the Engine API names a copied folder /workspace/...).
func ReadTar(r io.Reader, lim Limits) (Snapshot, error) {
	s := &snapper{lim: lim}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return s.snap, nil
		}
		if err != nil {
			return s.snap, fmt.Errorf("reading the workspace archive: %w", err)
		}
		if s.visited++; s.visited > maxVisited {
			s.snap.Skipped = append(s.snap.Skipped, Skipped{Path: "(more files than " + fmt.Sprint(maxVisited) + ")"})
			return s.snap, nil
		}
		_, name, ok := strings.Cut(path.Clean(h.Name), "/")
		if !ok || h.Typeflag != tar.TypeReg || !ValidPath(name) || !s.take(name, h.Size) {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, lim.MaxFile+1))
		if err != nil {
			return s.snap, fmt.Errorf("reading %s from the workspace archive: %w", name, err)
		}
		s.snap.Files = append(s.snap.Files, File{Path: name, Data: data})
	}
}

// ValidPath says name is a clean relative path that stays inside the
// workspace.
func ValidPath(name string) bool {
	return name != "" && name != "." && !path.IsAbs(name) && path.Clean(name) == name &&
		name != ".." && !strings.HasPrefix(name, "../")
}

// Tar writes files as a tar stream of regular files and their folders,
// owned by uid, under the folder dir.
func Tar(files []File, dir string, uid int) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	for _, f := range files {
		if !ValidPath(f.Path) {
			return nil, fmt.Errorf("workspace path %q is not a clean relative path", f.Path)
		}
		var parents []string
		for d := path.Dir(f.Path); d != "." && !seen[d]; d = path.Dir(d) {
			parents = append(parents, d)
			seen[d] = true
		}
		for i := len(parents) - 1; i >= 0; i-- {
			h := &tar.Header{Typeflag: tar.TypeDir, Name: path.Join(dir, parents[i]) + "/", Mode: 0o755, Uid: uid, Gid: uid}
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: path.Join(dir, f.Path), Mode: 0o644, Size: int64(len(f.Data)), Uid: uid, Gid: uid}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return buf.Bytes(), err
}
