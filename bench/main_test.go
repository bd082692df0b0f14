package main

import (
	"strings"
	"testing"
)

func TestParseFlags(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"--runs", "10", "--concurrency", "4", "--json"}, ""},
		{[]string{"--url", "http://127.0.0.1:8000", "--aimock-url", "http://localhost:4010"}, ""},
		{[]string{"--url", "http://[::1]:8000"}, ""},
		{[]string{"--url", "http://example.com:8000"}, "not on loopback"},
		{[]string{"--url", "https://127.0.0.1"}, "not an http URL"},
		{[]string{"--runs", "0"}, "--runs must be at least 1"},
		{[]string{"--warmup", "-1"}, "--warmup must not be negative"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--soak", "--soak-runs", "8", "--subscribers", "40", "--soak-rounds", "2"}, ""},
		{[]string{"--soak", "--soak-runs", "20", "--subscribers", "10"}, "--subscribers (10) must be at least --soak-runs (20)"},
		{[]string{"--soak", "--soak-rounds", "0"}, "--soak-rounds must be at least 1"},
		{[]string{"--inflight", "100", "--model-latency", "2s", "--ramp", "1s", "--hold", "5s", "--inflight-api", "wait", "--max-runs", "50", "--mock-http1"}, ""},
		{[]string{"--inflight", "100", "--inflight-api", "poll"}, "pass stream or wait"},
		{[]string{"--inflight", "100", "--model-latency", "0s"}, "positive --model-latency"},
		{[]string{"--inflight", "100", "--url", "http://127.0.0.1:8000"}, "does not take --url"},
		{[]string{"--vs-dawn-ts"}, "needs --dawn-ts-src"},
		{[]string{"--vs-dawn-ts", "--dawn-ts-src", "/src", "--url", "http://127.0.0.1:8000"}, "does not take --url"},
		{[]string{"--vs-dawn-ts", "--dawn-ts-src", "/src", "--port", "-1"}, "--port -1"},
		{[]string{"--vs-dawn-ts", "--dawn-ts-src", "/src", "--port", "3300"}, ""},
		{[]string{"--wire-diff"}, "it needs --dawn2 BINARY"},
		{[]string{"--wire-diff", "--dawn2", "/new", "--url", "http://127.0.0.1:8000"}, "no --url"},
		{[]string{"--wire-diff", "--dawn", "/old", "--dawn2", "/new", "--wire-out", "/tmp/rec"}, ""},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parseFlags(tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestReady(t *testing.T) {
	cases := map[string]string{
		`{"time":"x","level":"INFO","msg":"dawn server ready","url":"http://127.0.0.1:45855","routes":4}`: "http://127.0.0.1:45855",
		"Dawn dev ready at http://127.0.0.1:4000":                                                         "http://127.0.0.1:4000",
		"[aimock] aimock server listening on http://127.0.0.1:41234":                                      "http://127.0.0.1:41234",
		`{"level":"INFO","msg":"using the built-in offline model"}`:                                       "",
		`{"level":"INFO","msg":"serving Go profiles","profiles":"http://127.0.0.1:6060/debug/pprof/"}`:    "",
		"dawn dev: reloaded 1 route(s)":                                                                   "",
	}
	for line, want := range cases {
		if got := ready(line); got != want {
			t.Errorf("ready(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestReportVerdicts(t *testing.T) {
	r := newReport()
	r.declare("s", "fast", "fast enough", "runs/s", atLeast, 600)
	r.declare("s", "small", "small enough", "ms", atMost, 1)
	r.declare("s", "info", "context", "ms", info, 0)
	r.declare("s", "none", "never measured", "ms", atMost, 1)
	for _, v := range []float64{700, 500, 650} {
		r.add("fast", v)
	}
	r.add("small", 1.5)
	r.add("info", 3)
	r.skip("none", "needs aimock")
	r.finish()
	if f := r.byKey["fast"]; f.Median != 650 || f.Min != 500 || f.Max != 700 || !*f.Met {
		t.Errorf("fast = %+v", f)
	}
	if f := r.byKey["small"]; *f.Met {
		t.Errorf("small met with 1.5 ms against <= 1 ms")
	}
	if f := r.byKey["info"]; f.Met != nil {
		t.Errorf("info has a verdict")
	}
	var out strings.Builder
	r.writeTable(&out)
	for _, want := range []string{"650 runs/s", "500–700 runs/s", "NOT MET", "(needs aimock)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
