package planfirst

// Order returns the step ids in the order they run: a topological order of
// the deps graph (Kahn's algorithm) in which, whenever several steps are
// ready, the one written first in the plan goes first.
//
// The planner's own order is the tie-breaker because it is the only order
// that means something for every naming scheme: ids are free-form ("E2",
// "fetch", "step-10"), lexical order runs E10 before E2, and natural order
// fixes that only for one scheme. Since Validate lets deps
// point only backwards, a valid plan runs exactly in the order it was
// written, which is also the order its steps appear as plan items. Order
// still sorts properly for hand-built plans: unknown deps are ignored, and
// steps caught in a cycle are appended in plan order so every step appears
// exactly once.
func Order(p *Plan) []string {
	idx := orderIndices(p)
	ids := make([]string, len(idx))
	for k, i := range idx {
		ids[k] = p.Steps[i].ID
	}
	return ids
}

// orderIndices is Order on step positions.
func orderIndices(p *Plan) []int {
	n := len(p.Steps)
	first := make(map[string]int, n)
	for i, s := range p.Steps {
		if _, ok := first[s.ID]; !ok {
			first[s.ID] = i
		}
	}
	waiting := make([]int, n)    // unmet deps per step
	children := make([][]int, n) // steps waiting on each step
	for i, s := range p.Steps {
		for _, d := range s.Deps {
			j, ok := first[d]
			if !ok || j == i {
				continue
			}
			waiting[i]++
			children[j] = append(children[j], i)
		}
	}
	done := make([]bool, n)
	order := make([]int, 0, n)
	for len(order) < n {
		next := -1
		for i := range n { // lowest position among ready steps
			if !done[i] && waiting[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 { // a cycle: break it at the earliest remaining step
			for i := range n {
				if !done[i] {
					next = i
					break
				}
			}
		}
		done[next] = true
		order = append(order, next)
		for _, c := range children[next] {
			waiting[c]--
		}
	}
	return order
}
