package planfirst

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add(`{"goal":"g","steps":[{"id":"E1","task":"a"},{"id":"E2","task":"b #E1.summary","deps":["E1"]}]}`)
	f.Add("```json\n[{\"id\":\"E1\",\"task\":\"x #E1.head=3\"}]\n```")
	f.Add(`prose {"steps":[{"id":"E1","task":"#E9.last=0 #E1.foo"}]} more`)
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Parse(text)
		if err != nil {
			var ve *ValidationError
			if p != nil || !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("Parse error %v (%T) with plan %v", err, err, p)
			}
			return
		}
		// A parsed plan is valid, stays valid, and survives a round trip.
		if err := Validate(p); err != nil {
			t.Fatalf("parsed plan fails Validate: %v", err)
		}
		again, err := Parse(p.JSON())
		if err != nil {
			t.Fatalf("re-encoded plan fails: %v", err)
		}
		if !reflect.DeepEqual(again, p) {
			t.Fatalf("round trip changed the plan:\n%+v\n%+v", p, again)
		}
		// Order is a permutation that runs deps first.
		order := Order(p)
		at := make(map[string]int, len(order))
		for k, id := range order {
			at[id] = k
		}
		if len(order) != len(p.Steps) || len(at) != len(order) {
			t.Fatalf("order %v is not a permutation of %d steps", order, len(p.Steps))
		}
		for _, s := range p.Steps {
			for _, d := range s.Deps {
				if at[d] >= at[s.ID] {
					t.Fatalf("%s runs before its dep %s", s.ID, d)
				}
			}
		}
		// Executing and rendering never panic.
		r := Execute(context.Background(), p, echoRunner, nil)
		_ = r.Text()
		_ = Preview(p)
		if _, err := json.Marshal(PreviewData(p)); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzResolve(f *testing.F) {
	f.Add("use #E1.summary, #E1.head=3 and #E2.last=2. #E1.")
	f.Add("C#E1 #E1-based #E1.foo #E1.head=0")
	f.Fuzz(func(t *testing.T, task string) {
		outputs := map[string]Output{"E1": {Text: "héllo\nworld"}, "E2": {Err: "bad"}}
		_ = Resolve(task, outputs)
		if got := Resolve(task, nil); got != task {
			t.Fatalf("Resolve with no outputs changed %q to %q", task, got)
		}
	})
}
