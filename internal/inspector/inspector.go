package inspector

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// Prefix is the path the page and its assets are served under.
const Prefix = "/_dawn/"

// contentSecurityPolicy keeps the page to its own origin: no CDN, no web
// fonts, no requests anywhere but the dev server.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page at Prefix and its assets below it. Requests whose
// path does not start with Prefix, or name no asset, get 404.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

// Register mounts the page on e: Prefix serves it, and GET / and GET
// /_dawn redirect there.
func Register(e *echo.Echo) {
	h := echo.WrapHandler(Handler())
	e.GET(Prefix+"*", h)
	e.HEAD(Prefix+"*", h)
	toPage := func(c echo.Context) error { return c.Redirect(http.StatusFound, Prefix) }
	e.GET("/", toPage)
	e.GET(strings.TrimSuffix(Prefix, "/"), toPage)
}

func serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the inspector page is read-only; use GET", http.StatusMethodNotAllowed)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if name == "" {
		name = "index.html"
	}
	a, ok := assets()[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	a.write(w, r)
}
