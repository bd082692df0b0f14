package planfirst

// Order returns the step ids in the order they run: a topological order of
// the deps graph (Kahn's algorithm) in which, whenever several steps are
// ready, the one written first in the plan goes first.
//
// The planner's own order is the tie-breaker because it is the only order
// that means something for every naming scheme: ids are free-form ("E2",
// "fetch", "step-10"), lexical order runs E10 before E2, and natural order
// (see NaturalLess) fixes that only for one scheme. Since Validate lets deps
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

// NaturalLess reports whether a sorts before b in natural order: runs of
// digits compare by numeric value, so "E2" < "E10" (lexical order says the
// opposite), and everything else compares byte by byte. Equal values with
// different leading zeros sort the shorter first, and the order is total.
//
// Order does not use it: execution follows the plan's own order. It is for
// listing ids that have no plan position, like the keys of an outputs map.
func NaturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			da, db := trimZeros(a[si:i]), trimZeros(b[sj:j])
			if len(da) != len(db) {
				return len(da) < len(db)
			}
			if da != db {
				return da < db
			}
			if i-si != j-sj { // same value, fewer leading zeros first
				return i-si < j-sj
			}
			continue
		}
		if a[i] != b[j] {
			return a[i] < b[j]
		}
		i++
		j++
	}
	if len(a)-i != len(b)-j {
		return len(a)-i < len(b)-j
	}
	return a < b
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
