package inspector

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed static
var static embed.FS

// asset is one embedded file, ready to serve: its bytes, a gzip copy made
// once at start-up, and an ETag from its content.
type asset struct {
	contentType string
	raw         []byte
	gzipped     []byte
	etag        string
}

// contentTypes are fixed here rather than read from the system's MIME
// tables, which differ between machines.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// assets holds every file under static/, by name relative to it.
var assets = loadAssets()

func loadAssets() map[string]*asset {
	out := map[string]*asset{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		a := &asset{contentType: contentTypes[path.Ext(p)], raw: raw, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		if a.contentType == "" {
			a.contentType = "application/octet-stream"
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(raw)
		if zw.Close() == nil && buf.Len() < len(raw) {
			a.gzipped = buf.Bytes()
		}
		out[strings.TrimPrefix(p, "static/")] = a
		return nil
	})
	if err != nil {
		panic("inspector: reading embedded assets: " + err.Error())
	}
	return out
}

// write serves a with revalidation (the dev server's files change with the
// binary, so browsers must ask each time) and gzip when the client takes it.
func (a *asset) write(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.raw
	if a.gzipped != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body = a.gzipped
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.TrimSpace(name) != "*" {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
