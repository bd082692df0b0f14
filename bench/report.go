package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// goal says which way a figure should go to meet its target.
type goal int

const (
	info    goal = iota // no target: shown for context
	atMost              // met when the median is at most the target
	atLeast             // met when the median is at least the target
)

// figure is one line of the report: a value measured once per repeat.
type figure struct {
	Key     string    `json:"key"`
	Section string    `json:"section"`
	Name    string    `json:"name"`
	Unit    string    `json:"unit"`
	Goal    string    `json:"goal,omitempty"` // "<=" or ">="
	Target  float64   `json:"target,omitempty"`
	Values  []float64 `json:"values"`
	Median  float64   `json:"median"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Met     *bool     `json:"met,omitempty"`
	Skipped string    `json:"skipped,omitempty"` // why there is no value
	goal    goal
}

// report collects figures in the order they were declared.
type report struct {
	Machine []fact         `json:"machine"`
	Config  map[string]any `json:"config"`
	Notes   []string       `json:"notes"`
	Figures []*figure      `json:"figures"`
	byKey   map[string]*figure
}

// fact is one line about the machine the figures ran on.
type fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func newReport() *report { return &report{byKey: map[string]*figure{}} }

// setFact sets the machine fact name, keeping the order facts were first set.
func (r *report) setFact(name, value string) {
	for i := range r.Machine {
		if r.Machine[i].Name == name {
			r.Machine[i].Value = value
			return
		}
	}
	r.Machine = append(r.Machine, fact{name, value})
}

// declare adds a figure with no values yet.
func (r *report) declare(section, key, name, unit string, g goal, target float64) {
	f := &figure{Key: key, Section: section, Name: name, Unit: unit, Target: target, goal: g}
	switch g {
	case atMost:
		f.Goal = "<="
	case atLeast:
		f.Goal = ">="
	}
	r.Figures = append(r.Figures, f)
	r.byKey[key] = f
}

// add records one repeat's value of figure key.
func (r *report) add(key string, v float64) {
	f := r.byKey[key]
	if f == nil {
		panic("bench: undeclared figure " + key)
	}
	f.Values = append(f.Values, v)
}

// skip records why figure key has no value.
func (r *report) skip(key, why string) {
	if f := r.byKey[key]; f != nil && f.Skipped == "" {
		f.Skipped = why
	}
}

// note adds a line printed under the table.
func (r *report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// finish computes each figure's median, range and verdict.
func (r *report) finish() {
	for _, f := range r.Figures {
		if len(f.Values) == 0 {
			continue
		}
		f.Median, f.Min, f.Max = median(f.Values), math.Inf(1), math.Inf(-1)
		for _, v := range f.Values {
			f.Min, f.Max = min(f.Min, v), max(f.Max, v)
		}
		if f.goal != info {
			met := f.goal == atMost && f.Median <= f.Target || f.goal == atLeast && f.Median >= f.Target
			f.Met = &met
		}
	}
}

// writeTable prints the report as an aligned table, section by section.
func (r *report) writeTable(w io.Writer) {
	for _, f := range r.Machine {
		fmt.Fprintf(w, "%s: %s\n", f.Name, f.Value)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	section := ""
	for _, f := range r.Figures {
		if f.Section != section {
			section = f.Section
			fmt.Fprintf(tw, "\n%s\tmedian\tmin–max\ttarget\tmet\n", strings.ToUpper(section))
		}
		if len(f.Values) == 0 {
			why := f.Skipped
			if why == "" {
				why = "not measured"
			}
			fmt.Fprintf(tw, "  %s\t-\t-\t%s\t(%s)\n", f.Name, targetText(f), why)
			continue
		}
		verdict := ""
		if f.Met != nil {
			verdict = map[bool]string{true: "met", false: "NOT MET"}[*f.Met]
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", f.Name, valueText(f.Median, f.Unit), rangeText(f), targetText(f), verdict)
	}
	tw.Flush()
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range r.Notes {
			fmt.Fprintln(w, "  -", n)
		}
	}
}

// writeJSON prints the report as one JSON document.
func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func valueText(v float64, unit string) string {
	switch {
	case v == 0:
		return "0 " + unit
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.3f %s", v, unit)
}

func rangeText(f *figure) string {
	if len(f.Values) < 2 {
		return "-"
	}
	return strings.TrimSuffix(valueText(f.Min, ""), " ") + "–" + valueText(f.Max, f.Unit)
}

func targetText(f *figure) string {
	if f.goal == info {
		return ""
	}
	return f.Goal + " " + valueText(f.Target, f.Unit)
}
