package inspector_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/inspector"
	"github.com/labstack/echo/v4"
)

func TestHandlerServesAssets(t *testing.T) {
	e := echo.New()
	inspector.Register(e)
	tests := []struct {
		name, method, path, gzip string
		status                   int
		contentType, contains    string
		location                 string
	}{
		{name: "page", method: "GET", path: "/_dawn/", status: 200, contentType: "text/html; charset=utf-8", contains: `<section id="plan"`},
		{name: "page by name", method: "GET", path: "/_dawn/index.html", status: 200, contentType: "text/html; charset=utf-8", contains: "inspector.js"},
		{name: "script", method: "GET", path: "/_dawn/inspector.js", status: 200, contentType: "text/javascript; charset=utf-8", contains: "Dawn dev inspector"},
		{name: "style", method: "GET", path: "/_dawn/inspector.css", status: 200, contentType: "text/css; charset=utf-8", contains: ":focus-visible"},
		{name: "gzip", method: "GET", path: "/_dawn/inspector.js", gzip: "gzip, deflate, br", status: 200, contentType: "text/javascript; charset=utf-8", contains: "plan_update"},
		{name: "gzip refused", method: "GET", path: "/_dawn/inspector.js", gzip: "gzip;q=0", status: 200, contentType: "text/javascript; charset=utf-8", contains: "plan_update"},
		{name: "head", method: "HEAD", path: "/_dawn/", status: 200, contentType: "text/html; charset=utf-8"},
		{name: "missing asset", method: "GET", path: "/_dawn/nope.js", status: 404},
		{name: "root redirects", method: "GET", path: "/", status: 302, location: "/_dawn/"},
		{name: "bare prefix redirects", method: "GET", path: "/_dawn", status: 302, location: "/_dawn/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.gzip != "" {
				req.Header.Set("Accept-Encoding", tt.gzip)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("%s %s: status %d, want %d", tt.method, tt.path, rec.Code, tt.status)
			}
			if tt.location != "" && rec.Header().Get("Location") != tt.location {
				t.Errorf("Location = %q, want %q", rec.Header().Get("Location"), tt.location)
			}
			if tt.contentType != "" && rec.Header().Get("Content-Type") != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", rec.Header().Get("Content-Type"), tt.contentType)
			}
			if tt.status != 200 {
				return
			}
			checkAsset(t, rec, tt.method, tt.gzip, tt.contains)
		})
	}
}

// checkAsset checks an asset served with 200 to a request with method and
// Accept-Encoding acceptEncoding: a policy that blocks other origins, a
// body that holds contains (none for HEAD).
func checkAsset(t *testing.T, rec *httptest.ResponseRecorder, method, acceptEncoding, contains string) {
	t.Helper()
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q, want one that blocks other origins", csp)
	}
	body := decodedBody(t, rec, acceptEncoding)
	if method == "HEAD" && len(body) != 0 {
		t.Errorf("HEAD wrote a %d-byte body", len(body))
	}
	if !strings.Contains(string(body), contains) {
		t.Errorf("body does not contain %q", contains)
	}
}

// decodedBody checks the response is gzipped exactly when the request
// accepted gzip ("gzip, deflate, br" in these cases), and returns the body
// unzipped.
func decodedBody(t *testing.T, rec *httptest.ResponseRecorder, acceptEncoding string) []byte {
	t.Helper()
	body := rec.Body.Bytes()
	zipped := rec.Header().Get("Content-Encoding") == "gzip"
	if zipped != (acceptEncoding == "gzip, deflate, br") {
		t.Errorf("Content-Encoding = %q for Accept-Encoding %q", rec.Header().Get("Content-Encoding"), acceptEncoding)
	}
	if !zipped {
		return body
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	return body
}

func TestHandlerRevalidates(t *testing.T) {
	h := inspector.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/_dawn/inspector.css", nil))
	etag := rec.Header().Get("ETag")
	if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q: want an ETag and no-cache", etag, rec.Header().Get("Cache-Control"))
	}
	req := httptest.NewRequest("GET", "/_dawn/inspector.css", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Fatalf("revalidation: status %d with %d bytes, want 304 and no body", rec.Code, rec.Body.Len())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/_dawn/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: status %d, want 405", rec.Code)
	}
}

// TestPageNeedsNothingElse checks the page loads nothing from other
// origins: no http(s) URLs in the markup, script or style.
func TestPageNeedsNothingElse(t *testing.T) {
	for _, name := range []string{"index.html", "inspector.js", "inspector.css"} {
		rec := httptest.NewRecorder()
		inspector.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/_dawn/"+name, nil))
		for _, bad := range []string{"http://", "https://", "//cdn", "@import", "url("} {
			if strings.Contains(rec.Body.String(), bad) {
				t.Errorf("%s contains %q; the page must work offline with no other requests", name, bad)
			}
		}
	}
}

func BenchmarkServePage(b *testing.B) {
	h := inspector.Handler()
	req := httptest.NewRequest("GET", "/_dawn/inspector.js", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
}
