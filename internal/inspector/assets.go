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
	"sync"
)

//go:embed static
var static embed.FS

// asset is one embedded file, ready to serve: its bytes, an ETag from its
// content and a gzip copy made on the first request that takes gzip.
type asset struct {
	contentType string
	raw         []byte
	etag        string
	gzipOnce    sync.Once
	gzipped     []byte // nil when gzip does not make the file smaller
}

// contentTypes are fixed here rather than read from the system's MIME
// tables, which differ between machines.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// assets returns every file under static/, by name relative to it. They
// are read on the first request, not at init: a command that never serves
// the inspector (dawn routes, dawn check) pays nothing for them.
var assets = sync.OnceValue(loadAssets)

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
		out[strings.TrimPrefix(p, "static/")] = a
		return nil
	})
	if err != nil {
		panic("inspector: reading embedded assets: " + err.Error())
	}
	return out
}

// gzip returns the gzip copy of a, made once; nil when gzip does not make
// the file smaller.
func (a *asset) gzip() []byte {
	a.gzipOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(a.raw)
		if zw.Close() == nil && buf.Len() < len(a.raw) {
			a.gzipped = buf.Bytes()
		}
	})
	return a.gzipped
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
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		if z := a.gzip(); z != nil {
			body = z
			h.Set("Content-Encoding", "gzip")
		}
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
