package stream

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendCompactJSON(t *testing.T) {
	inputs := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `true`, `false`, `null`,
		" { \"a\" : [ 1 , 2 , { } ] , \"b\" : \"x y\\n\\\"\\u00e9\" } ",
		"\t\r\n[\n\"\\/\\b\\f\\n\\r\\t\\\\\"\n]\n",
		`{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`,
		`tru`, `nulls`, `"abc`, "\"a\x01\"", `"\x"`, `"\u12g4"`, `"\u12"`, `{}{}`, ``, ` `,
		"\"\xff\xfe\"", `[[[]]]`, `{"a":{"b":{"c":[true,false,null]}}}`, "1\x00",
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	}
	for _, in := range inputs {
		checkCompact(t, []byte(in))
	}
}

// checkCompact compares appendCompactJSON with json.Valid and json.Compact.
func checkCompact(t *testing.T, in []byte) {
	t.Helper()
	got, ok := appendCompactJSON([]byte("pre"), in)
	valid := json.Valid(in)
	if ok != valid {
		t.Fatalf("appendCompactJSON(%.60q) ok = %v, json.Valid = %v", in, ok, valid)
	}
	if !ok {
		if string(got) != "pre" {
			t.Fatalf("appendCompactJSON(%.60q) failed but changed dst to %.60q", in, got)
		}
		return
	}
	var want bytes.Buffer
	if err := json.Compact(&want, in); err != nil {
		t.Fatal(err)
	}
	if string(got) != "pre"+want.String() {
		t.Fatalf("appendCompactJSON(%.60q) = %.60q, want %.60q", in, got[3:], want.String())
	}
}

func TestAppendJSONString(t *testing.T) {
	inputs := []string{"", "plain", "a\"b\\c", "\n\r\t\x00\x1f\x7f", "é☀😀", "\xff\xfe", "a\xe2\x82", "\u2028"}
	for _, in := range inputs {
		out := appendJSONString(nil, []byte(in))
		if bytes.ContainsAny(out, "\r\n") {
			t.Errorf("appendJSONString(%q) = %q has a line break", in, out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("appendJSONString(%q) = %q is not valid JSON: %v", in, out, err)
		}
		if want := strings.ToValidUTF8(in, "\uFFFD"); utf8.ValidString(in) && back != want {
			t.Errorf("appendJSONString(%q) decodes to %q", in, back)
		}
	}
}

func FuzzCompactJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5e3, "x\ny"], "b": null}`, ` [true,false] `, `"\u00e9"`, `-0.1`, `{"a":}`, "\"\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkCompact(t, in)
	})
}

// BenchmarkCompactJSON compares appendCompactJSON with what it replaces,
// json.Valid followed by json.Compact, on a plan_update's data.
func BenchmarkCompactJSON(b *testing.B) {
	data := []byte(`{"todos":[{"content":"Read the customer's ticket and the account history","status":"completed"},{"content":"Check the billing system for duplicate charges","status":"in_progress"},{"content":"Draft a refund proposal","status":"pending"},{"content":"Reply to the customer with next steps","status":"pending"}]}`)
	b.Run("appendCompactJSON", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var dst []byte
		for b.Loop() {
			dst, _ = appendCompactJSON(dst[:0], data)
		}
	})
	b.Run("json.Valid+Compact", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var dst bytes.Buffer
		for b.Loop() {
			dst.Reset()
			if json.Valid(data) {
				_ = json.Compact(&dst, data)
			}
		}
	})
}
