package plandiff

import "strings"

// LogField is the state field in which a plain plan.md plan (one the
// harness does not own) keeps its Log; a harness-owned plan keeps the same
// fields inside its plan.
const LogField = "plan_revisions"

// Sources of a revision: who made it.
const (
	SourceModel      = "model"      // the model, through writeTodos
	SourcePerson     = "person"     // a person: a state update, or an answer to an interrupt
	SourceHarness    = "harness"    // the plan harness itself
	SourceSupervisor = "supervisor" // a supervisor's pause, resume or cancel
)

// Revision records one change to a plan and why it was made.
type Revision struct {
	N int `json:"n"`
	// Source is "model", "harness", "supervisor", or "person" for a
	// person's answer to an interrupt or change of the thread's state.
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"`
	Change string `json:"change"`
	// Diff is what the revision changed in the items, when it changed
	// them.
	Diff *Diff `json:"diff,omitempty"`
}

// MaxRevisions bounds the revisions a plan keeps in the thread's state:
// past it the oldest go, counted in Log.Trimmed (N keeps counting), while
// the items they dropped stay in Log.Dropped.
const MaxRevisions = 50

// maxDropped bounds Log.Dropped; past it the oldest entries go.
const maxDropped = 200

// Log is a plan's revisions, kept in the thread's state with the plan.
type Log struct {
	Revisions []Revision `json:"revisions"`
	// RevisionN counts every revision the plan has had.
	RevisionN int `json:"revision_n"`
	// Trimmed counts the oldest revisions no longer kept (MaxRevisions).
	Trimmed int `json:"trimmed_revisions,omitempty"`
	// Dropped lists every item a revision removed before it was finished,
	// with the revision that removed it.
	Dropped []Removed `json:"dropped,omitempty"`
}

// Add records a revision by source for reason, described by change, with
// its diff d (nil, or an empty diff, for a change that left the items as
// they were), and returns it.
func (l *Log) Add(source, reason, change string, d *Diff) Revision {
	l.RevisionN++
	if d.Empty() {
		d = nil
	} else {
		l.record(l.RevisionN, d)
	}
	r := Revision{N: l.RevisionN, Source: source, Reason: strings.TrimSpace(reason), Change: change, Diff: d}
	l.Revisions = append(l.Revisions, r)
	if over := len(l.Revisions) - MaxRevisions; over > 0 {
		l.Revisions = l.Revisions[over:]
		l.Trimmed += over
	}
	return r
}

// record keeps the dropped items of d, which revision n made, in
// l.Dropped, so that a plan's dropped work stays visible after its
// revisions are trimmed.
func (l *Log) record(n int, d *Diff) {
	for _, r := range d.Removed {
		if r.Dropped {
			r.Revision = n
			l.Dropped = append(l.Dropped, r)
		}
	}
	if len(l.Dropped) > maxDropped {
		l.Dropped = l.Dropped[len(l.Dropped)-maxDropped:]
	}
}

// Since returns the revisions numbered above n that changed the items:
// the plan_revised events of a step that moved the log on from n.
func (l *Log) Since(n int) []Revision {
	var out []Revision
	for _, r := range l.Revisions {
		if r.N > n && r.Diff != nil {
			out = append(out, r)
		}
	}
	return out
}

// Paging of GET /threads/:id/plan/revisions.
const (
	DefaultPage = 20
	MaxPage     = MaxRevisions
)

// Page is GET /threads/:id/plan/revisions: a page of the plan's
// revisions, oldest first, each with its diff, and every item the plan
// dropped.
type Page struct {
	ThreadID  string     `json:"thread_id"`
	Revisions []Revision `json:"revisions"`
	// Total is the number of revisions the plan has had; Trimmed of
	// them, the oldest, are no longer kept (see MaxRevisions).
	Total   int `json:"total"`
	Trimmed int `json:"trimmed"`
	// NextAfter, when set, is the after= of the next page.
	NextAfter int       `json:"next_after,omitempty"`
	Dropped   []Removed `json:"dropped"`
}

// Page returns the kept revisions numbered above after (0: from the oldest
// kept), at most limit of them, of thread threadID.
func (l *Log) Page(threadID string, after, limit int) Page {
	p := Page{ThreadID: threadID, Revisions: []Revision{}, Total: l.RevisionN, Trimmed: l.Trimmed, Dropped: l.Dropped}
	if p.Dropped == nil {
		p.Dropped = []Removed{}
	}
	for _, rev := range l.Revisions {
		if rev.N <= after {
			continue
		}
		if len(p.Revisions) == limit {
			p.NextAfter = p.Revisions[limit-1].N
			break
		}
		p.Revisions = append(p.Revisions, rev)
	}
	return p
}
