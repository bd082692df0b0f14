package main

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

func TestConsecutive(t *testing.T) {
	ev := func(id int64, typ string) stream.Event {
		return stream.Event{ID: id, Type: typ, Data: json.RawMessage(`{}`)}
	}
	cases := []struct {
		name   string
		events []stream.Event
		want   bool
	}{
		{"ids 1..3 ending with done", []stream.Event{ev(1, "tool_call"), ev(2, "plan_update"), ev(3, "done")}, true},
		{"empty", nil, false},
		{"no done", []stream.Event{ev(1, "chunk"), ev(2, "chunk")}, false},
		{"gap", []stream.Event{ev(1, "chunk"), ev(3, "done")}, false},
		{"reordered", []stream.Event{ev(2, "chunk"), ev(1, "done")}, false},
		{"starts at 2", []stream.Event{ev(2, "done")}, false},
	}
	for _, tc := range cases {
		if got := consecutive(tc.events); got != tc.want {
			t.Errorf("%s: consecutive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSameJSON(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`[{"content":"a","status":"pending"}]`, `[ {"status":"pending", "content":"a"} ]`, true},
		{`[{"content":"a","status":"pending"}]`, `[{"content":"a","status":"completed"}]`, false},
		{`[]`, `null`, false},
		{``, `[]`, false},
	}
	for _, tc := range cases {
		if got := sameJSON(json.RawMessage(tc.a), json.RawMessage(tc.b)); got != tc.want {
			t.Errorf("sameJSON(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSoakResultOK(t *testing.T) {
	r := &soakResult{}
	if !r.ok() {
		t.Fatal("an empty result is not ok")
	}
	r.count(&r.Lost)
	if r.ok() {
		t.Fatal("a result with a lost subscriber is ok")
	}
	r = &soakResult{}
	for range 20 {
		r.problem("p")
	}
	if r.ok() || len(r.Problems) != 10 {
		t.Fatalf("problems = %d, ok = %v; want 10 kept and not ok", len(r.Problems), r.ok())
	}
}
