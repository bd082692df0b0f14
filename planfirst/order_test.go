package planfirst

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"
)

func TestOrder(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		want  []string
	}{
		{"single", []Step{{ID: "E1"}}, []string{"E1"}},
		{"diamond", []Step{
			{ID: "E1"},
			{ID: "E2", Deps: []string{"E1"}},
			{ID: "E3", Deps: []string{"E1"}},
			{ID: "E4", Deps: []string{"E2", "E3"}},
		}, []string{"E1", "E2", "E3", "E4"}},
		{"diamond written E3 before E2", []Step{
			{ID: "E1"},
			{ID: "E3", Deps: []string{"E1"}},
			{ID: "E2", Deps: []string{"E1"}},
			{ID: "E4", Deps: []string{"E2", "E3"}},
		}, []string{"E1", "E3", "E2", "E4"}},
		{"E1..E12 in numeric order, not lexical", idSteps("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11", "E12"),
			[]string{"E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11", "E12"}},
		{"E1..E12 written out of numeric order keep the written order", idSteps("E10", "E2", "E12", "E1", "E11", "E3", "E9", "E4", "E8", "E5", "E7", "E6"),
			[]string{"E10", "E2", "E12", "E1", "E11", "E3", "E9", "E4", "E8", "E5", "E7", "E6"}},
		// Hand-built plans that Validate would reject still get an order.
		{"forward dep", []Step{{ID: "B", Deps: []string{"A"}}, {ID: "A"}, {ID: "C"}}, []string{"A", "B", "C"}},
		{"forward chain", []Step{{ID: "E3", Deps: []string{"E2"}}, {ID: "E2", Deps: []string{"E1"}}, {ID: "E1"}}, []string{"E1", "E2", "E3"}},
		{"ready step overtakes a waiting one", []Step{{ID: "late", Deps: []string{"x"}}, {ID: "free"}, {ID: "x"}}, []string{"free", "x", "late"}},
		{"unknown and self deps ignored", []Step{{ID: "A", Deps: []string{"zzz", "A"}}, {ID: "B"}}, []string{"A", "B"}},
		{"cycle broken at the earliest step", []Step{{ID: "A", Deps: []string{"B"}}, {ID: "B", Deps: []string{"A"}}, {ID: "C"}}, []string{"C", "A", "B"}},
		{"empty", nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Order(&Plan{Steps: tt.steps})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Order = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOrderRespectsDeps(t *testing.T) {
	// Every valid plan's order puts each step after all its deps.
	p := &Plan{}
	for i := 1; i <= MaxSteps; i++ {
		s := Step{ID: fmt.Sprintf("E%d", i), Task: "t"}
		for j := 1; j < i; j++ {
			if (i*7+j*3)%5 == 0 {
				s.Deps = append(s.Deps, fmt.Sprintf("E%d", j))
			}
		}
		p.Steps = append(p.Steps, s)
	}
	if err := Validate(p); err != nil {
		t.Fatal(err)
	}
	order := Order(p)
	at := map[string]int{}
	for k, id := range order {
		at[id] = k
	}
	for _, s := range p.Steps {
		for _, d := range s.Deps {
			if at[d] >= at[s.ID] {
				t.Errorf("%s runs at %d, before its dep %s at %d", s.ID, at[s.ID], d, at[d])
			}
		}
	}
}

func TestNaturalLess(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"E2", "E10", true},
		{"E10", "E2", false},
		{"E1", "E1", false},
		{"E1", "E01", true},
		{"E01", "E1", false},
		{"E9", "F1", true},
		{"E", "E1", true},
		{"E1", "E1a", true},
		{"step2-b", "step10-a", true},
		{"a", "b", true},
		{"E99999999999999999999", "E100000000000000000000", true},
		{"1", "a", true},
	}
	for _, tt := range tests {
		if got := NaturalLess(tt.a, tt.b); got != tt.want {
			t.Errorf("NaturalLess(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	ids := []string{"E10", "E2", "E1", "E12", "E11", "E3", "E01"}
	sort.Slice(ids, func(i, j int) bool { return NaturalLess(ids[i], ids[j]) })
	if want := []string{"E1", "E01", "E2", "E3", "E10", "E11", "E12"}; !slices.Equal(ids, want) {
		t.Errorf("sorted = %v, want %v", ids, want)
	}
}

func idSteps(ids ...string) []Step {
	steps := make([]Step, len(ids))
	for i, id := range ids {
		steps[i] = Step{ID: id, Task: "do " + id}
	}
	return steps
}
