package server

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/internal/server/wire"
)

// HostGuard keeps web pages elsewhere from using a server that trusts
// whoever reaches it: one on a loopback address with no credential (dawn
// start) or meant for this machine's programs and pages (dawn dev). Its
// Wrap answers 403 with a JSON error to
//
//   - a request whose Host is not a loopback address, "localhost" or one
//     of Hosts (kind "forbidden_host"): a page on another site whose name
//     was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name;
//   - a request whose Origin is neither the server's own, http://HOST
//     (or https://HOST for a name of Hosts, served through a TLS proxy),
//     nor one of Origins (kind "forbidden_origin"): a page on another
//     site, or a sandboxed one (Origin "null"), calling the API.
//
// Requests without an Origin (curl, dawn run, a page's own GETs) pass, and
// so do requests without a Host (HTTP/1.0 health checks).
// The zero HostGuard allows loopback names and the server's own origin.
type HostGuard struct {
	// Hosts are the names besides loopback ones a request's Host may
	// name (dawn.yaml server.allowed_hosts): lower-case, without a port.
	Hosts []string
	// Origins are the origins besides the server's own whose pages may
	// call it (DAWN_CORS_ORIGINS); "*" allows every origin.
	Origins []string
}

// Wrap returns h behind the guard.
func (g HostGuard) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allowsHost(r.Host) {
			writeError(w, http.StatusForbidden, "forbidden_host", fmt.Sprintf(
				"this server answers only requests for its loopback address, like 127.0.0.1 or localhost, or a name in dawn.yaml's server.allowed_hosts; Host %q is not one (a page on another site reaching it through DNS rebinding?): use the address the server printed, or add the name to server.allowed_hosts", r.Host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.allowsOrigin(origin, r.Host) {
			writeError(w, http.StatusForbidden, "forbidden_origin", fmt.Sprintf(
				"this server answers only its own pages, the origins of DAWN_CORS_ORIGINS and programs without an Origin; a page on %q may not call it: open the page the server serves, call it from a program, or list the origin in DAWN_CORS_ORIGINS", origin))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// allowsHost reports whether host (a Host header, with or without a
// port) names this machine or one of g.Hosts. A request with no Host at
// all (HTTP/1.0, as a load balancer's health check) passes: only a
// browser's page can be rebound, and a browser always sends a Host.
func (g HostGuard) allowsHost(host string) bool {
	if host == "" || isLoopbackHost(host) {
		return true
	}
	name := hostOnly(host)
	return slices.ContainsFunc(g.Hosts, func(h string) bool { return strings.EqualFold(h, name) })
}

// allowsOrigin reports whether a page of origin may call the server that
// host names.
func (g HostGuard) allowsOrigin(origin, host string) bool {
	if strings.EqualFold(origin, "http://"+host) || !isLoopbackHost(host) && strings.EqualFold(origin, "https://"+host) {
		return true
	}
	return slices.ContainsFunc(g.Origins, func(o string) bool { return o == "*" || strings.EqualFold(o, origin) })
}

// LocalOnly wraps h, a server on a loopback address meant for programs and
// pages on this machine, behind the zero HostGuard.
func LocalOnly(h http.Handler) http.Handler { return HostGuard{}.Wrap(h) }

// isLoopbackHost reports whether host (a Host header, with or without a
// port) names this machine: "localhost" or a loopback IP address.
func isLoopbackHost(host string) bool {
	host = hostOnly(host)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly is a Host header without its port, brackets and final dot.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(host, ".")
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
