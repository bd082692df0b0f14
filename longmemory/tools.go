package longmemory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
)

// maxText bounds a memory's text, so one call cannot fill the store.
const maxText = 4096

// errNoStore is the tools' error where no run lends them the store.
var errNoStore = errors.New("long-term memory needs the app's store, which only a run lends its tools")

type rememberIn struct {
	Text string `json:"text" jsonschema:"the fact to remember, in one or two sentences"`
	Key  string `json:"key,omitempty" jsonschema:"a short name for the memory; remembering under a key again replaces it"`
}

// parse returns the memory's key (the one given, or one made from the
// text) and its text, or an error for the model.
func (in rememberIn) parse() (key, text string, err error) {
	text = strings.TrimSpace(in.Text)
	if text == "" || len(text) > maxText {
		return "", "", fmt.Errorf("text must hold the fact to remember, at most %d bytes", maxText)
	}
	key = strings.TrimSpace(in.Key)
	if key == "" {
		sum := sha256.Sum256([]byte(strings.ToLower(text)))
		key = "m-" + hex.EncodeToString(sum[:6])
	}
	return key, text, nil
}

type rememberOut struct {
	Key      string `json:"key"`
	Replaced bool   `json:"replaced"`
	// Merged is set when the memory was alike an existing one and was
	// merged into it (under that one's key).
	Merged bool `json:"merged,omitempty"`
	// Status is "candidate" when the memory waits for a person's approval.
	Status string `json:"status,omitempty"`
	Note   string `json:"note,omitempty"`
}

// writer writes a route's memories as its writes setting says.
type writer struct {
	ns    []string
	route string
	mode  string
}

func rememberTool(w writer) capabilities.Tool {
	return capabilities.Func("remember",
		"Remember a fact for later conversations of this agent (a preference, a decision, a name). Later threads find it with recall.",
		func(ctx context.Context, in rememberIn) (rememberOut, error) {
			key, text, err := in.parse()
			if err != nil {
				return rememberOut{}, err
			}
			st := items(ctx)
			if st == nil {
				return rememberOut{}, errNoStore
			}
			if w.mode == WritesCandidate {
				return w.propose(ctx, st, key, text)
			}
			via := WritesAuto
			if w.mode == WritesAsk {
				via = WritesAsk // the gate let the call run: a person approved it
			}
			return write(ctx, st, w.ns, key, text, Record{Status: StatusApproved, WrittenBy: authorOf(ctx, "agent"), WrittenAt: now(), ApprovedBy: authorOf(ctx, via), ApprovedAt: now()})
		})
}

// write keeps rec with text in ns under key; a memory of ns other than
// key's at least MergeThreshold alike takes it instead (the newer text,
// one more merge).
func write(ctx context.Context, st capabilities.ItemStore, ns []string, key, text string, rec Record) (rememberOut, error) {
	rec.Text = text
	out := rememberOut{Key: key}
	if dup, old, ok, err := closest(ctx, st, ns, text, key); err != nil {
		return rememberOut{}, err
	} else if ok {
		out.Key, out.Merged = dup, true
		rec.Merged = old.Merged + 1
	}
	old, replaced, err := st.Get(ctx, ns, out.Key)
	if err != nil {
		return rememberOut{}, err
	}
	if replaced && !out.Merged {
		rec.Merged = decodeRecord(old.Value).Merged
	}
	out.Replaced = replaced
	if err := st.Put(ctx, ns, out.Key, rec.encode()); err != nil {
		return rememberOut{}, err
	}
	return out, nil
}

// propose keeps text as a candidate, unless an approved memory already
// says it (then nothing is written).
func (w writer) propose(ctx context.Context, st capabilities.ItemStore, key, text string) (rememberOut, error) {
	if dup, _, ok, err := closest(ctx, st, w.ns, text, ""); err != nil {
		return rememberOut{}, err
	} else if ok {
		return rememberOut{Key: dup, Merged: true, Status: StatusApproved, Note: "an approved memory already says this"}, nil
	}
	out, err := write(ctx, st, CandidateNamespace(w.route), key, text, Record{Status: StatusCandidate, WrittenBy: authorOf(ctx, "agent"), WrittenAt: now()})
	out.Status, out.Note = StatusCandidate, "kept as a candidate: recall finds it once a person approves it"
	return out, err
}

type recallIn struct {
	Query string `json:"query" jsonschema:"words to look for in the memories; empty lists the newest"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many memories to return at most"`
}

type recalled struct {
	Key       string `json:"key"`
	Text      string `json:"text"`
	UpdatedAt string `json:"updated_at"`
}

type recallOut struct {
	Memories []recalled `json:"memories"`
}

func recallTool(ns []string, limit int) capabilities.Tool {
	return capabilities.Func("recall",
		"Recall facts remembered in earlier conversations of this agent: the memories holding any of the query's words, best match first.",
		func(ctx context.Context, in recallIn) (recallOut, error) {
			st := items(ctx)
			if st == nil {
				return recallOut{}, errNoStore
			}
			n := limit
			if in.Limit > 0 {
				n = min(in.Limit, maxLimit)
			}
			found, err := st.Search(ctx, ns, capabilities.ItemSearch{Query: in.Query, Limit: n})
			if err != nil {
				return recallOut{}, err
			}
			out := recallOut{Memories: []recalled{}}
			for _, it := range found {
				m := decodeRecord(it.Value)
				out.Memories = append(out.Memories, recalled{Key: it.Key, Text: m.Text, UpdatedAt: it.UpdatedAt.Format("2006-01-02T15:04:05Z07:00")})
			}
			return out, nil
		})
}

// items is the store the run lends the call, or nil.
func items(ctx context.Context) capabilities.ItemStore {
	inv, ok := capabilities.InvocationFrom(ctx)
	if !ok {
		return nil
	}
	return inv.Items
}
