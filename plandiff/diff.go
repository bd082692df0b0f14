package plandiff

import (
	"slices"

	"github.com/dawn-go/dawn/todo"
)

// EventRevised is the event that carries each new revision of a plan and
// its diff against the one before.
const EventRevised = "plan_revised"

// Item is one plan item as the diff sees it: an id that stays with the
// item while its content does, its text and its status.
type Item struct {
	ID      string
	Content string
	Status  todo.Status
}

// Diff is what one revision changed in a plan's items, against the
// revision before it.
type Diff struct {
	Added    []string  `json:"added,omitempty"`
	Removed  []Removed `json:"removed,omitempty"`
	Reworded []Reword  `json:"reworded,omitempty"`
	// Reordered says items kept from before are in another order.
	Reordered bool `json:"reordered,omitempty"`
	// Backwards lists kept items whose status moved back (completed to
	// pending, in_progress to pending).
	Backwards []Move `json:"backwards,omitempty"`
}

// Empty reports whether the diff changed nothing.
func (d *Diff) Empty() bool {
	return d == nil || (len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Reworded) == 0 && !d.Reordered && len(d.Backwards) == 0)
}

// CountDropped is how many of the items d removed were dropped.
func (d *Diff) CountDropped() int {
	if d == nil {
		return 0
	}
	n := 0
	for _, r := range d.Removed {
		if r.Dropped {
			n++
		}
	}
	return n
}

// Removed is an item a revision removed. Dropped says it was removed
// before it was finished (pending or in progress): work the plan once
// promised and no longer does.
type Removed struct {
	ID      string      `json:"id"`
	Content string      `json:"content"`
	Status  todo.Status `json:"status"`
	Dropped bool        `json:"dropped,omitempty"`
	// Revision is the revision that removed it (in Log.Dropped).
	Revision int `json:"revision,omitempty"`
}

// Reword is an item whose text changed in place: an item of the old list
// removed and one added at the same position.
type Reword struct {
	ID   string `json:"id"`
	From string `json:"from"`
	To   string `json:"to"`
	// Status is the old item's; a reworded item that was not finished is
	// not flagged dropped.
	Status todo.Status `json:"status"`
}

// Move is a kept item whose status moved backwards.
type Move struct {
	ID      string      `json:"id"`
	Content string      `json:"content"`
	From    todo.Status `json:"from"`
	To      todo.Status `json:"to"`
}

// rank orders statuses for Backwards: pending, then in progress, then
// finished.
func rank(s todo.Status) int {
	switch {
	case s.Terminal():
		return 2
	case s == todo.InProgress:
		return 1
	}
	return 0
}

// Compute is the diff from old to next, where next's items keep the id of
// the old item they match (see Match).
func Compute(old, next []Item) *Diff {
	d := &Diff{}
	byID := map[string]int{}
	for i, it := range old {
		byID[it.ID] = i
	}
	kept := map[string]bool{}
	var order []int // old positions of kept items, in their new order
	var added []int
	for j, it := range next {
		i, ok := byID[it.ID]
		if !ok {
			added = append(added, j)
			continue
		}
		kept[it.ID] = true
		order = append(order, i)
		if rank(it.Status) < rank(old[i].Status) {
			d.Backwards = append(d.Backwards, Move{ID: it.ID, Content: it.Content, From: old[i].Status, To: it.Status})
		}
	}
	d.Reordered = !slices.IsSorted(order)
	var removed []int
	for i, it := range old {
		if !kept[it.ID] {
			removed = append(removed, i)
		}
	}
	// An item removed and one added at the same position is a rewording.
	for _, j := range added {
		if k := slices.Index(removed, j); k >= 0 {
			o := old[j]
			d.Reworded = append(d.Reworded, Reword{ID: o.ID, From: o.Content, To: next[j].Content, Status: o.Status})
			removed = slices.Delete(removed, k, k+1)
			continue
		}
		d.Added = append(d.Added, next[j].Content)
	}
	for _, i := range removed {
		o := old[i]
		d.Removed = append(d.Removed, Removed{ID: o.ID, Content: o.Content, Status: o.Status, Dropped: !o.Status.Terminal()})
	}
	return d
}

// Match gives each item of next the id of the first old item with the
// same content not matched before it, and an id from newID to the rest,
// as the harness keeps an item's id while its text stays the same.
func Match(old []Item, next []Item, newID func() string) []Item {
	free := map[string][]string{}
	for _, it := range old {
		free[it.Content] = append(free[it.Content], it.ID)
	}
	out := make([]Item, len(next))
	for i, it := range next {
		if ids := free[it.Content]; len(ids) > 0 {
			it.ID, free[it.Content] = ids[0], ids[1:]
		} else {
			it.ID = newID()
		}
		out[i] = it
	}
	return out
}
