package planfirst

import (
	"fmt"
	"reflect"
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

func idSteps(ids ...string) []Step {
	steps := make([]Step, len(ids))
	for i, id := range ids {
		steps[i] = Step{ID: id, Task: "do " + id}
	}
	return steps
}
