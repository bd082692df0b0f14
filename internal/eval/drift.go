package eval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/plandiff"
	"github.com/dawn-go/dawn/stream"
	"gopkg.in/yaml.v3"
)

// Expectations on how a run's plan drifted.
const (
	// ExpectNoDroppedItems fails a run whose plan lost an item before it
	// was finished.
	ExpectNoDroppedItems = "no_dropped_items"
	// ExpectMaxRevisions caps how often the plan's list changed shape
	// (items added, removed, reworded or reordered).
	ExpectMaxRevisions = "max_revisions"
)

// driftKeys are the expect keys of this file.
var driftKeys = []string{ExpectNoDroppedItems, ExpectMaxRevisions}

// DriftExpect is what a case expects of its plan's drift. Unset fields
// check nothing.
type DriftExpect struct {
	NoDroppedItems *bool `json:"no_dropped_items,omitempty"`
	MaxRevisions   int   `json:"max_revisions,omitempty"`
}

// Drift is how a run's plan drifted, read from its events: the
// plan_revised events a plan.md plan, harness-owned or plain, sends for
// each revision it keeps that changed the list (with its diff), or, for a
// plan that keeps no revisions (a parallel or plan-first plan), successive
// plan_update lists compared by content.
type Drift struct {
	// Revisions counts the changes of the list's shape.
	Revisions int `json:"revisions,omitempty"`
	// Dropped are items removed before they were finished.
	Dropped []string `json:"dropped,omitempty"`

	revised bool
	// updates are the plan_update lists, for a run without plan_revised.
	updates [][]Todo
}

// planRevised is the event a plan.md plan sends for each revision that
// changed its list.
const planRevised = plandiff.EventRevised

// observe reads one event of the run.
func (d *Drift) observe(e stream.Event) {
	switch e.Type {
	case planRevised:
		var r plandiff.Revision
		if json.Unmarshal(e.Data, &r) != nil || r.Diff == nil {
			return
		}
		d.revised = true
		d.Revisions++
		for _, it := range r.Diff.Removed {
			if it.Dropped {
				d.Dropped = append(d.Dropped, it.Content)
			}
		}
	case planUpdate:
		var p struct {
			Todos []Todo `json:"todos"`
		}
		if json.Unmarshal(e.Data, &p) == nil {
			d.updates = append(d.updates, p.Todos)
		}
	}
}

// settle compares the plan_update lists of a run that had no plan_revised
// events: each change of the contents in order is a revision, and an
// unfinished item whose text is gone is dropped.
func (d *Drift) settle() {
	if d.revised {
		return
	}
	for i := 1; i < len(d.updates); i++ {
		prev, next := d.updates[i-1], d.updates[i]
		if !slices.Equal(contents(prev), contents(next)) {
			d.Revisions++
		}
		for _, t := range prev {
			if t.Status != "completed" && !slices.Contains(contents(next), t.Content) {
				d.Dropped = append(d.Dropped, t.Content)
			}
		}
	}
	d.updates = nil
}

func contents(todos []Todo) []string {
	out := make([]string, len(todos))
	for i, t := range todos {
		out[i] = t.Content
	}
	return out
}

// names lists the drift expectations e checks.
func (e DriftExpect) names() []string {
	var out []string
	if e.NoDroppedItems != nil {
		out = append(out, ExpectNoDroppedItems)
	}
	if e.MaxRevisions > 0 {
		out = append(out, ExpectMaxRevisions)
	}
	return out
}

// drift reads the drift expectations among an expect mapping's fields.
func (p *parser) drift(f map[string]*yaml.Node, e *DriftExpect) {
	if v := f[ExpectNoDroppedItems]; v != nil {
		var b bool
		if p.decode(v, "expect."+ExpectNoDroppedItems, &b, "true or false") {
			e.NoDroppedItems = &b
		}
	}
	if v := f[ExpectMaxRevisions]; v != nil {
		p.positive(v, "expect."+ExpectMaxRevisions, &e.MaxRevisions)
	}
}

// checkDrift checks o's drift against e.
func checkDrift(e DriftExpect, o Observation) []Result {
	var out []Result
	if e.NoDroppedItems != nil {
		r := Result{Expectation: ExpectNoDroppedItems, Pass: true}
		switch dropped := len(o.Drift.Dropped) > 0; {
		case *e.NoDroppedItems && dropped:
			r.Pass, r.Detail = false, fmt.Sprintf("the plan dropped %d item(s) before finishing them: %q", len(o.Drift.Dropped), strings.Join(o.Drift.Dropped, `", "`))
		case !*e.NoDroppedItems && !dropped:
			r.Pass, r.Detail = false, "the plan dropped no item"
		}
		out = append(out, r)
	}
	if e.MaxRevisions > 0 {
		r := Result{Expectation: ExpectMaxRevisions, Pass: o.Drift.Revisions <= e.MaxRevisions}
		if !r.Pass {
			r.Detail = fmt.Sprintf("the plan's list changed %d times, over %d", o.Drift.Revisions, e.MaxRevisions)
		}
		out = append(out, r)
	}
	return out
}
