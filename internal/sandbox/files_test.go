package sandbox

import (
	"bytes"
	"testing"
)

// FuzzReadTar: whatever archive a box sends back, ReadTar returns only
// clean relative paths within the limits, and never panics.
func FuzzReadTar(f *testing.F) {
	seed, err := Tar([]File{{Path: "a.txt", Data: []byte("hello")}, {Path: "d/e/f.md", Data: []byte("# f")}}, "workspace", 1000)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("not a tar"))
	lim := Limits{MaxFile: 64, MaxFiles: 3, MaxTotal: 100}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, _ := ReadTar(bytes.NewReader(data), lim)
		var total int64
		for _, file := range snap.Files {
			if !ValidPath(file.Path) || int64(len(file.Data)) > lim.MaxFile {
				t.Fatalf("file %q of %d bytes", file.Path, len(file.Data))
			}
			total += int64(len(file.Data))
		}
		if len(snap.Files) > lim.MaxFiles || total > lim.MaxTotal {
			t.Fatalf("%d files, %d bytes", len(snap.Files), total)
		}
	})
}

// TestTarRoundTrip: what Tar writes under a folder, ReadTar reads back.
func TestTarRoundTrip(t *testing.T) {
	files := []File{{Path: "a.txt", Data: []byte("hello")}, {Path: "d/e/f.md", Data: []byte("# f")}}
	data, err := Tar(files, "workspace", 1000)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := ReadTar(bytes.NewReader(data), Limits{MaxFile: 10, MaxFiles: 10, MaxTotal: 100})
	if err != nil || len(snap.Files) != 2 || snap.Files[1].Path != "d/e/f.md" || string(snap.Files[0].Data) != "hello" {
		t.Fatalf("%+v %v", snap, err)
	}
	if _, err := Tar([]File{{Path: "../x"}}, ".", 0); err == nil {
		t.Fatal("Tar took a path out of the workspace")
	}
}
