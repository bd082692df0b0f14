package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// normalizer rewrites what legitimately differs between two servers
// answering the same script: generated ids become placeholders numbered in
// order of first sight (so the same id maps to the same placeholder
// wherever it is echoed, and a server that echoes the wrong id still
// differs), and timestamps, durations and the server's own address become
// constants. One normalizer serves one server's whole script.
type normalizer struct {
	ids  map[string]string
	base string // the server's host and port
	app  string // the app folder, named in some errors
}

func newNormalizer(base, app string) *normalizer {
	return &normalizer{ids: map[string]string{}, base: strings.TrimPrefix(base, "http://"), app: app}
}

var (
	// idPattern finds generated ids: UUIDs, and crypto/rand.Text's 26
	// base32 characters (A2A's new contexts).
	idPattern = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\b[A-Z2-7]{26}\b`)
	// timePattern finds RFC 3339 timestamps.
	timePattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)
	// clockKeys finds JSON numbers whose key names a clock reading or a
	// duration: unix times and milliseconds taken. They become the string
	// "<clock>", so the body stays JSON.
	clockKeys = regexp.MustCompile(`"(created|created_at|updated_at|timestamp|duration_ms|latency_ms|elapsed_ms|ms|started_at|ended_at)":\s*-?\d+(\.\d+)?`)
)

// text normalizes s.
func (n *normalizer) text(s string) string {
	s = strings.ReplaceAll(s, n.base, "<server>")
	s = strings.ReplaceAll(s, n.app, "<app>")
	s = idPattern.ReplaceAllStringFunc(s, n.id)
	s = timePattern.ReplaceAllString(s, "<time>")
	return clockKeys.ReplaceAllString(s, `"$1":"<clock>"`)
}

// id returns the placeholder of a generated id.
func (n *normalizer) id(raw string) string {
	key := strings.ToLower(raw)
	if p, ok := n.ids[key]; ok {
		return p
	}
	p := fmt.Sprintf("<id%d>", len(n.ids)+1)
	n.ids[key] = p
	return p
}

// droppedHeaders differ by the moment or follow from the body.
var droppedHeaders = map[string]bool{"Date": true, "Content-Length": true}

// headers returns the response's headers that matter, normalized and
// sorted, with Transfer-Encoding (chunked or not is part of the wire).
func (n *normalizer) headers(resp *http.Response) []string {
	var out []string
	names := slices.Sorted(maps.Keys(resp.Header)) // ids are numbered in this order
	for _, name := range names {
		if droppedHeaders[name] {
			continue
		}
		for _, v := range resp.Header[name] {
			out = append(out, name+": "+n.text(v))
		}
	}
	if len(resp.TransferEncoding) > 0 {
		out = append(out, "Transfer-Encoding: "+strings.Join(resp.TransferEncoding, ", "))
	}
	slices.Sort(out)
	return out
}

// body normalizes a response body: an SSE stream without its comment lines
// (keep-alives come by the clock), anything else as text.
func (n *normalizer) body(contentType string, data []byte) string {
	s := string(data)
	if strings.HasPrefix(contentType, "text/event-stream") {
		var kept []string
		for _, line := range strings.Split(s, "\n") {
			if !strings.HasPrefix(line, ":") {
				kept = append(kept, line)
			}
		}
		s = strings.Join(kept, "\n")
	}
	return n.text(s)
}

// render is an exchange as the lines a diff shows: the request, the
// status, the headers, then the body, JSON indented one value a line when
// pretty (the comparison itself is of the bodies as sent).
func (e exchange) render(pretty bool) []string {
	lines := []string{"> " + strings.ReplaceAll(e.request, "\n", "\n> ")}
	if e.status == stopped {
		lines = append(lines, "< (no answer the script could go on with)")
	} else {
		lines = append(lines, fmt.Sprintf("< %d", e.status))
	}
	for _, h := range e.header {
		lines = append(lines, "< "+h)
	}
	body := e.body
	if pretty {
		body = prettyBody(body)
	}
	lines = strings.Split(strings.Join(lines, "\n")+"\n\n"+body, "\n")
	return lines
}

// prettyBody indents a JSON body, and each data line of an SSE stream that
// holds JSON; anything else is returned as it is.
func prettyBody(body string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(body), "", "  ") == nil {
		return buf.String()
	}
	lines := strings.Split(body, "\n")
	for i, line := range lines {
		data, ok := strings.CutPrefix(line, "data: ")
		buf.Reset()
		if ok && json.Indent(&buf, []byte(data), "  ", "  ") == nil {
			lines[i] = "data: " + buf.String()
		}
	}
	return strings.Join(lines, "\n")
}

// same reports whether two exchanges are the same once normalized.
func (e exchange) same(o exchange) bool {
	return e.request == o.request && e.status == o.status && slices.Equal(e.header, o.header) && e.body == o.body
}
