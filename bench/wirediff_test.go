package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// plant changes one response of a server on its way to the script: the
// planted difference the comparison must find.
type plant struct {
	wire, path string // the wire it belongs to, and the request path it changes
	old, new   string // replaced once in the body
	header     string // added to the response when not empty
	status     int    // the response's status instead, when not 0
	wantInDiff []string
}

// TestWireDiffFindsThePlantedDifference records the script against the
// same binary three times: two plain recordings must not differ on any
// wire (the normalization holds), and one behind a proxy that plants one
// difference (a JSON field, an SSE frame, a header, a space in a body, a
// status)
// must differ on exactly that wire, with the change in the diff; a
// difference that stops the wire's script stops only that wire's.
func TestWireDiffFindsThePlantedDifference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts dawn")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	repo, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := buildDawn(ctx, repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := recordThrough(ctx, t, bin, nil)
	var out strings.Builder
	if n := writeWireVerdicts(&out, a, recordThrough(ctx, t, bin, nil)); n != 0 {
		t.Fatalf("the same binary twice: %d wires differ:\n%s", n, out.String())
	}
	for _, p := range []plant{
		{wire: "openai", path: "/v1/models", old: `"owned_by":"dawn"`, new: `"owned_by":"planted"`,
			wantInDiff: []string{`-      "owned_by": "dawn"`, `+      "owned_by": "planted"`}},
		{wire: "agui", path: "/agui/support/acme", old: `"threadId":"ag-1"`, new: `"threadId":"ag-2"`,
			wantInDiff: []string{`"threadId": "ag-2"`}},
		{wire: "mcp", path: "/mcp", header: "X-Planted: yes", wantInDiff: []string{"+< X-Planted: yes"}},
		{wire: "dawn", path: "/healthz", old: `{"status":"ready"}`, new: `{"status": "ready"}`,
			wantInDiff: []string{`-{"status":"ready"}`, `+{"status": "ready"}`}},
		// message/send answers 500: the script cannot read the task back.
		{wire: "a2a", path: "/a2a/support/acme", status: http.StatusInternalServerError,
			wantInDiff: []string{"-< 200", "+< 500", "exchange 3 of 5 (A) / 4 (B)"}},
	} {
		t.Run(p.wire, func(t *testing.T) {
			b := recordThrough(ctx, t, bin, &p)
			out.Reset()
			n := writeWireVerdicts(&out, a, b)
			report := out.String()
			if n != 1 || !strings.Contains(report, p.wire+strings.Repeat(" ", 10-len(p.wire))+" DIFFERENT") {
				t.Fatalf("a difference planted on %s: %d wires differ:\n%s", p.wire, n, report)
			}
			for _, want := range p.wantInDiff {
				if !strings.Contains(report, want) {
					t.Errorf("the diff lacks %q:\n%s", want, report)
				}
			}
		})
	}
}

// recordThrough starts bin on a fresh fixture app and records the script
// against it through a proxy, which plants p when p is not nil.
func recordThrough(ctx context.Context, t *testing.T, bin string, p *plant) []exchange {
	t.Helper()
	app := filepath.Join(t.TempDir(), "app")
	if err := writeFiles(app, wireApp); err != nil {
		t.Fatal(err)
	}
	srv, err := startDawn(ctx, bin, app, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop(10 * time.Second)
	front := httptest.NewServer(p.proxy(srv.url))
	defer front.Close()
	rec, err := recordWires(ctx, front.URL, app)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// proxy forwards each request to target and copies the answer back, every
// header included (httputil.ReverseProxy would drop hop-by-hop ones such
// as Connection, itself a difference), with p planted when it answers p's
// path.
func (p *plant) proxy(target string) http.Handler {
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		req.Host = r.Host // the server names the address it was reached at
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		planted := p != nil && r.URL.Path == p.path
		if planted && p.old != "" {
			data = bytes.Replace(data, []byte(p.old), []byte(p.new), 1)
		}
		for name, values := range resp.Header {
			w.Header()[name] = values
		}
		if planted && p.header != "" {
			name, value, _ := strings.Cut(p.header, ": ")
			w.Header().Set(name, value)
		}
		w.Header().Del("Content-Length")
		status := resp.StatusCode
		if planted && p.status != 0 {
			status = p.status
		}
		w.WriteHeader(status)
		_, _ = w.Write(data)
	})
}

// TestNormalizerKeepsIdsApart: ids become placeholders in order of first
// sight, so two servers that mint different ids match, and a server that
// echoes a different id where the other echoes the same one does not.
func TestNormalizerKeepsIdsApart(t *testing.T) {
	const u1, u2, u3 = "0b9c4a10-7f1e-4c2a-9a57-1f2e3d4c5b6a", "6d8e9f00-1a2b-4c3d-8e9f-a0b1c2d3e4f5", "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
	a := newNormalizer("http://127.0.0.1:4000", "/tmp/a")
	b := newNormalizer("http://127.0.0.1:5000", "/tmp/b")
	cases := []struct{ a, b string }{
		{`{"thread_id":"` + u1 + `","at":"http://127.0.0.1:4000/x"}`, `{"thread_id":"` + u2 + `","at":"http://127.0.0.1:5000/x"}`},
		{`{"run":"` + u3 + `","thread":"` + u1 + `"}`, `{"run":"` + u1 + `","thread":"` + u2 + `"}`},
		{`{"created_at":"2026-12-08T00:20:16.123Z","created":1765152016,"duration_ms":12}`, `{"created_at":"2026-12-08T00:21:00Z","created":1765152077,"duration_ms":3}`},
		{`a2a-HUZ7XNQLKV45DWX75S2HO7WKRH in /tmp/a/approve.yaml`, `a2a-AIGQCMZXRF3MPM6BDIUJQA4KMH in /tmp/b/approve.yaml`},
	}
	for _, tc := range cases {
		if na, nb := a.text(tc.a), b.text(tc.b); na != nb {
			t.Errorf("%s\nand %s\nnormalize to %s\nand %s", tc.a, tc.b, na, nb)
		}
	}
	// A echoes the first thread, B a new id where A echoed the first.
	if na, nb := a.text(`{"thread":"`+u1+`"}`), b.text(`{"thread":"`+u3+`"}`); na == nb {
		t.Errorf("an echoed id and a new one both normalize to %s", na)
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := strings.Split("a b c d e f g h i j k l m", " ")
	b := strings.Split("a b c D e f g h i j k l m n", " ")
	want := "@@ line 1 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n@@ line 11 @@\n k\n l\n m\n+n\n"
	if got := unifiedDiff(a, b, 3); got != want {
		t.Errorf("unifiedDiff:\n%s\nwant:\n%s", got, want)
	}
	if got := unifiedDiff(a, a, 3); got != "" {
		t.Errorf("the diff of equal lines is %q", got)
	}
}
