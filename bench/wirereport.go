package main

import (
	"fmt"
	"io"
	"strings"
)

// wireVerdict is one wire's comparison: how many exchanges each server
// recorded and the first pair that differs (index -1 when none does).
type wireVerdict struct {
	wire  string
	a, b  []exchange
	first int
}

// compareWires groups two recordings by wire, in the script's order, and
// finds each wire's first differing exchange.
func compareWires(a, b []exchange) []wireVerdict {
	var out []wireVerdict
	for _, w := range wireScript {
		v := wireVerdict{wire: w.name, a: ofWire(a, w.name), b: ofWire(b, w.name), first: -1}
		for i := range max(len(v.a), len(v.b)) {
			if i >= len(v.a) || i >= len(v.b) || !v.a[i].same(v.b[i]) {
				v.first = i
				break
			}
		}
		out = append(out, v)
	}
	return out
}

// stopped reports whether the script of the wire stopped early on A.
func (v wireVerdict) stopped() bool {
	return len(v.a) > 0 && v.a[len(v.a)-1].status == stopped
}

func ofWire(recs []exchange, wire string) []exchange {
	var out []exchange
	for _, e := range recs {
		if e.wire == wire {
			out = append(out, e)
		}
	}
	return out
}

// writeWireVerdicts prints a line per wire, then for each wire that
// differs a unified diff of its first differing exchange, and returns how
// many wires differ.
func writeWireVerdicts(w io.Writer, a, b []exchange) int {
	verdicts := compareWires(a, b)
	differ := 0
	for _, v := range verdicts {
		if v.first < 0 && v.stopped() {
			differ++ // the same, but the script did not get through
			fmt.Fprintf(w, "%-10s STOPPED    on both, after %d exchanges: %s\n", v.wire, len(v.a)-1, v.a[len(v.a)-1].body)
			continue
		}
		if v.first < 0 {
			fmt.Fprintf(w, "%-10s same       %d exchanges\n", v.wire, len(v.a))
			continue
		}
		differ++
		fmt.Fprintf(w, "%-10s DIFFERENT  exchange %d of %d (A) / %d (B)\n", v.wire, v.first+1, len(v.a), len(v.b))
	}
	for _, v := range verdicts {
		if v.first >= 0 {
			fmt.Fprintf(w, "\n--- A %s, exchange %d\n+++ B %s, exchange %d\n", v.wire, v.first+1, v.wire, v.first+1)
			fmt.Fprint(w, exchangeDiff(v))
		}
	}
	if differ == 0 {
		fmt.Fprintf(w, "\nno difference on any wire (%d exchanges, normalized: ids, timestamps, durations, address)\n", len(a))
	} else {
		fmt.Fprintf(w, "\n%d of %d wires differ\n", differ, len(verdicts))
	}
	return differ
}

// exchangeDiff is the unified diff of a wire's first differing exchange;
// the bodies indented, unless they differ only in the bytes indenting
// hides (spacing, key order is kept either way).
func exchangeDiff(v wireVerdict) string {
	pick := func(recs []exchange, pretty bool) []string {
		if v.first < len(recs) {
			return recs[v.first].render(pretty)
		}
		return []string{"(no exchange: the script stopped earlier)"}
	}
	a, b := pick(v.a, true), pick(v.b, true)
	if strings.Join(a, "\n") == strings.Join(b, "\n") {
		a, b = pick(v.a, false), pick(v.b, false)
	}
	return unifiedDiff(a, b, 3)
}

// unifiedDiff returns the hunks of a line diff of a and b (longest common
// subsequence) with ctx lines of context.
func unifiedDiff(a, b []string, ctx int) string {
	ops := diffOps(a, b)
	var out strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(run, end+ctx)
				break
			}
			end = run
		}
		fmt.Fprintf(&out, "@@ line %d @@\n", ops[start].line+1)
		for _, op := range ops[start:end] {
			fmt.Fprintf(&out, "%c%s\n", op.kind, op.text)
		}
		i = end
	}
	return out.String()
}

// diffOp is one line of a diff: ' ' kept, '-' only in a, '+' only in b;
// line is its index in a (in b for '+').
type diffOp struct {
	kind byte
	text string
	line int
}

// diffOps walks the longest common subsequence table of a and b.
func diffOps(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i], i})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], j})
			j++
		}
	}
	return ops
}
