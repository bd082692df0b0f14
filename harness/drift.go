package harness

import "github.com/dawn-go/dawn/plandiff"

// EventRevised is the event that carries each new revision of a plan and
// its diff against the one before.
const EventRevised = plandiff.EventRevised

// The diff of a revision is package plandiff's, which plain plan.md
// planning shares.
type (
	// Diff is what one revision changed in a plan's items, against the
	// revision before it.
	Diff = plandiff.Diff
	// Removed is an item a revision removed; Dropped says before it was
	// finished.
	Removed = plandiff.Removed
	// Reword is an item whose text changed in place.
	Reword = plandiff.Reword
	// Move is a kept item whose status moved backwards.
	Move = plandiff.Move
)

// diffItems is the diff from old to next, where next's items keep the id
// of the old item they match (Replace's matching by content).
func diffItems(old, next []Item) *Diff {
	return plandiff.Compute(diffView(old), diffView(next))
}

func diffView(items []Item) []plandiff.Item {
	out := make([]plandiff.Item, len(items))
	for i, it := range items {
		out[i] = plandiff.Item{ID: it.ID, Content: it.Content, Status: it.Status}
	}
	return out
}

// log is p's revisions as a plandiff.Log.
func (p *Plan) log() *plandiff.Log {
	return &plandiff.Log{Revisions: p.Revisions, RevisionN: p.RevisionN, Trimmed: p.Trimmed, Dropped: p.Dropped}
}

// reviseDiff records a change to the plan, with its diff when it changed
// the items.
func (p *Plan) reviseDiff(source, reason, change string, d *Diff) {
	l := p.log()
	l.Add(source, reason, change, d)
	p.Revisions, p.RevisionN, p.Trimmed, p.Dropped = l.Revisions, l.RevisionN, l.Trimmed, l.Dropped
}
