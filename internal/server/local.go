package server

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/dawn-go/dawn/internal/server/wire"
)

// LocalOnly wraps h, a server on a loopback address meant for programs and
// pages on this machine (dawn dev), so that web pages elsewhere cannot use
// it through the user's browser. It answers 403 with a JSON error to
//
//   - a request whose Host is not a loopback address or "localhost"
//     (kind "forbidden_host"): a page on another site whose name was made
//     to resolve to 127.0.0.1 (DNS rebinding) sends its own name;
//   - a request whose Origin is not http://HOST, the server's own origin
//     (kind "forbidden_origin"): a page on another site, or a sandboxed
//     one (Origin "null"), calling the API.
//
// Requests without an Origin (curl, dawn run, a page's own GETs) pass.
func LocalOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(r.Host) {
			writeError(w, http.StatusForbidden, "forbidden_host", fmt.Sprintf(
				"this server answers only requests for its loopback address, like 127.0.0.1 or localhost; Host %q is not one (a page on another site reaching it through DNS rebinding?): use the address the server printed", r.Host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !strings.EqualFold(origin, "http://"+r.Host) {
			writeError(w, http.StatusForbidden, "forbidden_origin", fmt.Sprintf(
				"this server answers only its own pages and programs without an Origin; a page on %q may not call it (it has no CORS): open the page the server serves, or call it from a program", origin))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isLoopbackHost reports whether host (a Host header, with or without a
// port) names this machine: "localhost" or a loopback IP address.
func isLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeError writes the API's JSON error outside echo.
func writeError(w http.ResponseWriter, status int, kind, msg string) {
	var body wire.ErrorBody
	body.Error.Kind, body.Error.Message = kind, msg
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// ParseOrigins reads a comma-separated list of origins, as in
// DAWN_CORS_ORIGINS: "https://app.example.com, http://localhost:3000".
// Spaces around each are ignored, and so are empty entries; "*" allows
// every origin. An entry that is not scheme://host[:port] (http or https,
// no path) is an error naming it.
func ParseOrigins(list string) ([]string, error) {
	var out []string
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
				return nil, fmt.Errorf("origin %q is not an origin: write scheme://host[:port], like https://app.example.com or http://localhost:3000, with no path", o)
			}
			o = strings.TrimSuffix(o, "/")
		}
		out = append(out, o)
	}
	return out, nil
}

// trimOrigins drops the spaces around each origin, and empty ones.
func trimOrigins(origins []string) []string {
	var out []string
	for _, o := range origins {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}
