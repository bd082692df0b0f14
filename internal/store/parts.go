package store

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"slices"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/thread"
)

// partMin is the size, in bytes of compact JSON, from which an array state
// field is kept in parts: history rows with run -1 (see
// migrations/0004_state_parts.sql). Smaller values, such as a plan's few
// todos, stay in threads.state: a part costs a row, and rewriting a small
// value costs little.
const partMin = 1024

// partsMeta is threads.parts: which state fields are kept in parts.
type partsMeta struct {
	// Next is the seq of the next part row of the thread.
	Next   int64                `json:"next"`
	Fields map[string]partField `json:"fields"`
}

// partField describes one field kept in parts.
type partField struct {
	// Size is the length of the field's compact JSON.
	Size int `json:"size"`
	// Sum is the hex SHA-256 of that JSON without its closing "]", so that
	// the sum of a longer array that starts with the same elements goes on
	// from the same hash state.
	Sum string `json:"sum"`
	// First is the seq of the field's first part. Parts are never deleted
	// (older checkpoints read them): a field written again starts anew.
	First int64 `json:"first,omitempty"`
}

// partedValue is a state field to keep in parts: its name and compact JSON.
type partedValue struct {
	name string
	text []byte
}

// splitValues compacts every array value of at least partMin bytes into
// parted, sorted by name, and returns the other values as whole. whole is
// values itself when nothing is parted.
func splitValues(values thread.State) (whole thread.State, parted []partedValue, err error) {
	for name, v := range values {
		trimmed := bytes.TrimLeft(v, " \t\r\n")
		if len(v) < partMin || len(trimmed) == 0 || trimmed[0] != '[' {
			continue
		}
		var buf bytes.Buffer
		buf.Grow(len(v))
		if err := json.Compact(&buf, v); err != nil {
			return nil, nil, fmt.Errorf("state field %q: %w", name, err)
		}
		if buf.Len() < partMin {
			continue
		}
		parted = append(parted, partedValue{name: name, text: buf.Bytes()})
	}
	if len(parted) == 0 {
		return values, nil, nil
	}
	slices.SortFunc(parted, func(a, b partedValue) int { return cmp.Compare(a.name, b.name) })
	whole = make(thread.State, len(values)-len(parted))
	for name, v := range values {
		if _, ok := slices.BinarySearchFunc(parted, name, func(p partedValue, n string) int { return cmp.Compare(p.name, n) }); !ok {
			whole[name] = v
		}
	}
	return whole, parted, nil
}

// planParts writes the part rows of a step whose parted values are
// parted, on the thread with pk threadPK whose threads.parts was metaText,
// and returns the new threads.parts. A field that only gained elements
// since the last checkpoint gets one part with them; an unchanged field
// gets nothing; any other field is written again as one part. Parts are
// never deleted: the kept checkpoints before still read them.
func planParts(ctx context.Context, tx dialect.Tx, threadPK int64, metaText string, parted []partedValue) (string, error) {
	if len(parted) == 0 && metaText == "{}" {
		return "{}", nil
	}
	p := &partPlan{ctx: ctx, tx: tx, threadPK: threadPK, h: sha256.New()}
	if err := json.Unmarshal([]byte(metaText), &p.old); err != nil {
		return "", fmt.Errorf("store: thread %d: parts %q: %w", threadPK, metaText, err)
	}
	p.next = partsMeta{Next: p.old.Next, Fields: make(map[string]partField, len(parted))}
	for _, v := range parted {
		if err := p.field(v); err != nil {
			return "", err
		}
	}
	if len(p.next.Fields) == 0 && p.next.Next == 0 {
		return "{}", nil
	}
	out, err := json.Marshal(p.next)
	return string(out), err
}

// partPlan is planParts' work on one thread: its parts as the last
// checkpoint left them (old) and as this one leaves them (next).
type partPlan struct {
	ctx       context.Context
	tx        dialect.Tx
	threadPK  int64
	old, next partsMeta
	h         hash.Hash
}

// field writes what parted value v needs: the elements it gained, or the
// whole array again.
func (p *partPlan) field(v partedValue) error {
	text := v.text
	p.h.Reset()
	old, had := p.old.Fields[v.name]
	first := old.First
	if had && extends(p.h, text, old) {
		if len(text) > old.Size {
			if err := p.add(v.name, text[old.Size:len(text)-1]); err != nil {
				return err
			}
			p.h.Write(text[old.Size-1 : len(text)-1])
		}
	} else {
		first = p.next.Next
		if err := p.add(v.name, text[1:len(text)-1]); err != nil {
			return err
		}
		p.h.Reset()
		p.h.Write(text[:len(text)-1])
	}
	p.next.Fields[v.name] = partField{Size: len(text), Sum: hex.EncodeToString(p.h.Sum(nil)), First: first}
	return nil
}

// add inserts one part of a field, the next in seq.
func (p *partPlan) add(name string, data []byte) error {
	if err := p.tx.InsertPart(p.ctx, p.threadPK, p.next.Next, name, data); err != nil {
		return fmt.Errorf("store: state field %q: %w", name, err)
	}
	p.next.Next++
	return nil
}

// extends reports whether v is the field old describes, or that array with
// elements added at its end. It leaves in h the hash of v up to old's
// closing "]".
func extends(h hash.Hash, v []byte, old partField) bool {
	if old.Size < 2 || len(v) < old.Size {
		return false
	}
	if len(v) > old.Size && v[old.Size-1] != ',' {
		return false
	}
	h.Write(v[:old.Size-1])
	return hex.EncodeToString(h.Sum(nil)) == old.Sum
}

// part is a part row as Latest reads it.
type part struct {
	seq   int64
	field string
	data  []byte
}

// joinParts puts the parted fields of metaText back into values from their
// parts, which are in seq order. A field's value is its parts from its
// First on, up to its Size: parts of other checkpoints (a field written
// again later, or before) are skipped.
func joinParts(values thread.State, metaText string, parts []part) error {
	if metaText == "{}" {
		return nil
	}
	var meta partsMeta
	if err := json.Unmarshal([]byte(metaText), &meta); err != nil {
		return fmt.Errorf("parts %q: %w", metaText, err)
	}
	joined := make(map[string][]byte, len(meta.Fields))
	for _, p := range parts {
		f, ok := meta.Fields[p.field]
		if !ok || p.seq < f.First || len(joined[p.field])+1 >= f.Size {
			continue
		}
		buf := joined[p.field]
		if buf == nil {
			buf = make([]byte, 0, f.Size)
			buf = append(buf, '[')
		} else {
			buf = append(buf, ',')
		}
		joined[p.field] = append(buf, p.data...)
	}
	for name, f := range meta.Fields {
		buf := append(joined[name], ']')
		if len(buf) != f.Size {
			return fmt.Errorf("state field %q: its parts hold %d bytes, the checkpoint says %d", name, len(buf), f.Size)
		}
		values[name] = buf
	}
	return nil
}
