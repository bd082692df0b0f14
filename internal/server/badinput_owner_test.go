package server_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestBadInputOnAnotherUsersThreadReadsAsMissing: bob's requests with a
// bad body or a bad header on ann's thread answer word for word as the
// same requests on a thread that was never created. Before, a bad body
// (invalid_body), a bad resume (invalid_resume) or a bad Last-Event-ID
// (invalid_last_event_id) got 400 on a missing thread and 404 on ann's,
// which told bob her thread exists.
func TestBadInputOnAnotherUsersThreadReadsAsMissing(t *testing.T) {
	creds := newCredentials(t, "hs256")
	gate := &holdGate{}
	t.Cleanup(gate.release)
	urls, _ := ownerServers(t, false, creds, gate)
	m := &matrix{t: t, urls: urls, tokens: creds.tokens, gate: gate, thread: "bad-input-ann"}
	m.createOn("dawn")
	for _, key := range slices.Sorted(maps.Keys(threadEndpoints)) {
		if slices.Contains(ownerLast, key) {
			continue
		}
		for _, c := range threadEndpoints[key] {
			for _, bad := range badVariants(c) {
				status, body := m.do("bob", bad, m.thread, m.run, m.cron)
				m.sameAsMissing(key+" with "+bad.header["Dawn-Variant"], bad, status, body)
			}
		}
	}
}

// badVariants are c with a body that is not JSON, a body of the wrong
// shape, and a Last-Event-ID that is no event id; Dawn-Variant names
// each (the server ignores it).
func badVariants(c ownerCall) []ownerCall {
	with := func(name, body string, header map[string]string) ownerCall {
		v := c
		v.body = body
		v.header = map[string]string{"Dawn-Variant": name}
		for k, val := range c.header {
			v.header[k] = val
		}
		for k, val := range header {
			v.header[k] = val
		}
		v.stream = false
		return v
	}
	var out []ownerCall
	if c.method != "GET" && c.method != "DELETE" {
		out = append(out,
			with("a body that is not JSON", `{"route":`, nil),
			with("a list for a body", `[1,2]`, nil),
			with("a resume of the wrong shape", strings.Replace(c.body, `"resume":[`, `"resume":"x","ignored":[`, 1), nil))
	}
	out = append(out, with("a bad Last-Event-ID", c.body, map[string]string{"Last-Event-ID": "not-a-number"}))
	return out
}
