package longmemory

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"github.com/dawn-go/dawn/capabilities"
)

// The statuses of a memory.
const (
	// StatusApproved is a memory recall finds.
	StatusApproved = "approved"
	// StatusCandidate is a memory proposed under writes: candidate,
	// which recall does not find until a person approves it.
	StatusCandidate = "candidate"
)

// MergeThreshold is how alike (Similarity) a new memory and a kept one
// must be for the new one to be merged into the kept one instead of kept
// beside it.
const MergeThreshold = 0.8

// Author is who wrote, approved or edited a memory: a user (or the
// service credential), and for a write by the agent, the thread and run.
// Via says how: "agent" (remember), "auto" (approved by writes: auto),
// "ask" (approved at a memory interrupt), "http" (the memory endpoints).
type Author struct {
	User    string `json:"user,omitempty"`
	Service bool   `json:"service,omitempty"`
	Thread  string `json:"thread,omitempty"`
	Run     string `json:"run,omitempty"`
	Via     string `json:"via"`
}

// Record is a memory as the store keeps it: its text and its provenance.
// A memory written before writes were governed has only Text, and counts
// as approved.
type Record struct {
	Text       string  `json:"text"`
	Status     string  `json:"status,omitempty"`
	WrittenBy  *Author `json:"written_by,omitempty"`
	WrittenAt  string  `json:"written_at,omitempty"`
	ApprovedBy *Author `json:"approved_by,omitempty"`
	ApprovedAt string  `json:"approved_at,omitempty"`
	EditedBy   *Author `json:"edited_by,omitempty"`
	EditedAt   string  `json:"edited_at,omitempty"`
	// Merged counts the writes merged into this memory as duplicates.
	Merged int `json:"merged,omitempty"`
}

func decodeRecord(raw json.RawMessage) Record {
	var r Record
	_ = json.Unmarshal(raw, &r)
	if r.Status == "" {
		r.Status = StatusApproved
	}
	return r
}

func (r Record) encode() json.RawMessage {
	raw, _ := json.Marshal(r)
	return raw
}

// now is the time a memory records, in RFC 3339.
func now() string { return time.Now().UTC().Format(time.RFC3339) }

// authorOf is the caller ctx names, by way via.
func authorOf(ctx context.Context, via string) *Author {
	a := &Author{Via: via}
	if id, ok := capabilities.IdentityFrom(ctx); ok {
		a.User, a.Service = id.User, id.Service
	}
	if inv, ok := capabilities.InvocationFrom(ctx); ok {
		a.Thread, a.Run = inv.ThreadID, inv.RunID
	}
	return a
}

// CandidateNamespace is the store namespace of a route's candidate
// memories, beside Namespace: recall searches Namespace only.
func CandidateNamespace(routeID string) []string {
	return []string{"memory_candidates", Namespace(routeID)[1]}
}

// Similarity scores how alike two memories' texts are, from 0 to 1: the
// share of their distinct words (letters and digits, any case) they have
// in common (Jaccard). It is the seam of duplicate merging: search by
// meaning replaces it with the store's own score (see closest).
func Similarity(a, b string) float64 {
	wa, wb := words(a), words(b)
	if len(wa) == 0 || len(wb) == 0 {
		return 0
	}
	common := 0
	for w := range wa {
		if wb[w] {
			common++
		}
	}
	return float64(common) / float64(len(wa)+len(wb)-common)
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

// closestLimit bounds the memories closest compares text with.
const closestLimit = 20

// closest finds the memory of ns most like text, other than the one under
// skipKey, when it is at least MergeThreshold alike: its key and record.
// It compares text with the store's best word matches for it.
func closest(ctx context.Context, st capabilities.ItemStore, ns []string, text, skipKey string) (string, Record, bool, error) {
	found, err := st.Search(ctx, ns, capabilities.ItemSearch{Query: text, Limit: closestLimit})
	if err != nil {
		return "", Record{}, false, err
	}
	best, bestScore := -1, 0.0
	for i, it := range found {
		if it.Key == skipKey {
			continue
		}
		if s := Similarity(text, decodeRecord(it.Value).Text); s >= MergeThreshold && s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return "", Record{}, false, nil
	}
	return found[best].Key, decodeRecord(found[best].Value), true, nil
}
