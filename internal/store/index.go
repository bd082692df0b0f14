package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Embedder turns texts into vectors, one per text, in order. The
// embedding APIs of model providers implement it (models.Embedder).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Index is how the store embeds items for search by meaning, as
// LangGraph's store index: every put embeds the item's Fields with
// Embedder, and a search with a query ranks the items by the cosine
// similarity of their vectors to the query's, fused with the word match
// (see SearchItems).
type Index struct {
	// Embedder makes the vectors; Model names it ("openai:text-embedding-3-small")
	// and is part of each vector's digest, so that a put after the model
	// changes embeds the item again.
	Embedder Embedder
	Model    string
	// Dims is the length of the model's vectors; a vector of another
	// length fails the put.
	Dims int
	// Fields are the JSON paths of the value whose text is embedded, each
	// to its own vector ("text", "a.b", "tags[0]", "items[*].name"); none,
	// or "$", embeds the whole value as JSON.
	Fields []string
	// MinSimilarity is the cosine similarity to the query an item's
	// vector needs to be ranked by meaning (see rankByMeaning); -1 ranks
	// every item. What is close depends on the model: unrelated texts
	// score about 0.1 with OpenAI's text-embedding-3 models, and more
	// with others.
	MinSimilarity float64
}

// DefaultMinSimilarity is the MinSimilarity dawn.yaml's store.index
// has when it sets none.
const DefaultMinSimilarity = 0.3

// ErrEmbed is a failure of the embedding model: the put or search that
// needed it did not happen.
var ErrEmbed = errors.New("the store's embedding model failed")

// rrfK is the constant of reciprocal-rank fusion: an item ranked r in a
// list earns 1/(rrfK + r) from it. 60 is the value of Cormack, Clarke and
// Büttcher's paper, and the one most systems keep.
const rrfK = 60

// CheckIndex refuses an index whose settings cannot work, naming the
// field of store.index in dawn.yaml.
func CheckIndex(ix Index) error {
	if ix.Embedder == nil {
		return fmt.Errorf("store.index.embed: %w: it must name an embedding model, like openai:text-embedding-3-small", ErrInvalid)
	}
	if ix.MinSimilarity < -1 || ix.MinSimilarity > 1 {
		return fmt.Errorf("store.index.min_similarity: %w: it must be a cosine similarity from -1 to 1, like 0.3", ErrInvalid)
	}
	if ix.Dims <= 0 || ix.Dims > 16000 {
		return fmt.Errorf("store.index.dims: %w: it must be the model's vector length, from 1 to 16000, like 1536", ErrInvalid)
	}
	for i, f := range ix.Fields {
		if _, err := parsePath(f); err != nil {
			return fmt.Errorf("store.index.fields[%d] %q: %w: %v", i, f, ErrInvalid, err)
		}
	}
	return nil
}

// fieldText is the text of one field of an item, at its concrete path.
type fieldText struct{ path, text string }

// texts returns the texts of value to embed: each configured field's (a
// string as it is, anything else as compact JSON), or the whole value.
func (ix *Index) texts(value json.RawMessage) ([]fieldText, error) {
	fields := ix.Fields
	if len(fields) == 0 {
		fields = []string{"$"}
	}
	var doc any
	if err := json.Unmarshal(value, &doc); err != nil {
		return nil, err
	}
	var out []fieldText
	for _, f := range fields {
		steps, err := parsePath(f)
		if err != nil {
			return nil, err
		}
		for _, found := range walkPath(doc, steps, "$") {
			text, ok := found.value.(string)
			if !ok {
				b, err := json.Marshal(found.value)
				if err != nil {
					return nil, err
				}
				text = string(b)
			}
			if strings.TrimSpace(text) != "" {
				out = append(out, fieldText{path: found.path, text: text})
			}
		}
	}
	return out, nil
}

// digest names what a vector was made from: the model, the dimensions
// and the text.
func (ix *Index) digest(text string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", ix.Model, ix.Dims)
	h.Write([]byte(text))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// vectorsFor returns the vector rows of value under namespace and key:
// those of fields whose text has not changed are the item's own, the
// others are embedded in one call. It returns nil, nil when the store has
// no index.
func (s *DB) vectorsFor(ctx context.Context, namespace, key string, value json.RawMessage) ([]dialect.VectorRow, error) {
	ix := s.index
	if ix == nil {
		return nil, nil
	}
	texts, err := ix.texts(value)
	if err != nil {
		return nil, fmt.Errorf("value: %w: %v", ErrInvalid, err)
	}
	old, err := s.d.ItemVectors(ctx, namespace, key)
	if err != nil {
		return nil, fmt.Errorf("store: read the vectors of item %q: %w", key, err)
	}
	kept := make(map[string][]byte, len(old))
	for _, v := range old {
		kept[v.Path+"\x00"+v.Digest] = v.Vector
	}
	rows := make([]dialect.VectorRow, len(texts))
	var ask []string
	var asked []int
	for i, t := range texts {
		rows[i] = dialect.VectorRow{Path: t.path, Digest: ix.digest(t.text)}
		if v, ok := kept[t.path+"\x00"+rows[i].Digest]; ok {
			rows[i].Vector = v
			continue
		}
		ask = append(ask, t.text)
		asked = append(asked, i)
	}
	if len(ask) == 0 {
		return rows, nil
	}
	vectors, err := ix.embed(ctx, ask)
	if err != nil {
		return nil, err
	}
	for j, i := range asked {
		rows[i].Vector = vectors[j]
	}
	return rows, nil
}

// embed asks the embedder for the vectors of texts and returns them
// scaled to length 1 and encoded.
func (ix *Index) embed(ctx context.Context, texts []string) ([][]byte, error) {
	vectors, err := ix.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmbed, err)
	}
	if len(vectors) != len(texts) {
		return nil, fmt.Errorf("%w: %s answered %d vectors for %d texts", ErrEmbed, ix.Model, len(vectors), len(texts))
	}
	out := make([][]byte, len(vectors))
	for i, v := range vectors {
		if len(v) != ix.Dims {
			return nil, fmt.Errorf("%w: %s made a vector of %d dimensions, and store.index.dims is %d; set dims to the model's length", ErrEmbed, ix.Model, len(v), ix.Dims)
		}
		out[i] = encodeVector(v)
	}
	return out, nil
}

// encodeVector scales v to length 1 and writes it as little-endian
// float32s; a zero vector stays zero.
func encodeVector(v []float32) []byte {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		norm = 1
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(float64(x)/norm)))
	}
	return b
}

// dot is the dot product of q and the encoded vector b (of len(q)
// components); with both of length 1 it is their cosine similarity.
func dot(q []float32, b []byte) float32 {
	var sum float32
	for i, x := range q {
		sum += x * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return sum
}

// pathStep is one step of a field path: a member name, an index (from
// the end when negative) or every element ("[*]").
type pathStep struct {
	name  string
	index int
	every bool
	isIdx bool
}

// parsePath reads a field path as LangGraph writes them: "$" (the whole
// value), "a", "a.b", "a[0]", "a[-1]", "a[*].b".
func parsePath(p string) ([]pathStep, error) {
	p = strings.TrimSpace(p)
	if p == "$" {
		return nil, nil
	}
	if p == "" {
		return nil, errors.New("a field path must name a field, like text or content.summary")
	}
	var steps []pathStep
	for part := range strings.SplitSeq(p, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name == "" && len(steps) == 0 && rest == "" {
			return nil, fmt.Errorf("path %q has an empty field name", p)
		}
		if name != "" {
			steps = append(steps, pathStep{name: name})
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("path %q has a [ without its ]", p)
			}
			step := pathStep{isIdx: true, every: idx == "*"}
			if !step.every {
				n, err := strconv.Atoi(idx)
				if err != nil {
					return nil, fmt.Errorf("path %q: [%s] must be a number or *", p, idx)
				}
				step.index = n
			}
			steps = append(steps, step)
			rest = strings.TrimPrefix(after, "[")
			if after != "" && !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("path %q: expected . or [ after ]", p)
			}
		}
	}
	return steps, nil
}

// found is a value a path reached, at its concrete path.
type found struct {
	path  string
	value any
}

// walkPath returns the values steps reach in v; a path that reaches
// nothing returns none.
func walkPath(v any, steps []pathStep, at string) []found {
	if len(steps) == 0 {
		if v == nil {
			return nil
		}
		return []found{{path: at, value: v}}
	}
	s := steps[0]
	if !s.isIdx {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		return walkPath(obj[s.name], steps[1:], strings.TrimPrefix(at+"."+s.name, "$."))
	}
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	if s.every {
		var out []found
		for i, x := range list {
			out = append(out, walkPath(x, steps[1:], at+"["+strconv.Itoa(i)+"]")...)
		}
		return out
	}
	i := s.index
	if i < 0 {
		i += len(list)
	}
	if i < 0 || i >= len(list) {
		return nil
	}
	return walkPath(list[i], steps[1:], at+"["+strconv.Itoa(i)+"]")
}

// rankByMeaning ranks items (those under q's prefix that pass its filter,
// Score their word match) by reciprocal-rank fusion of two lists:
//
//   - by meaning: the items whose closest vector has a cosine similarity
//     to the query's of at least MinSimilarity, most similar first;
//   - by words: the items whose text holds a word of the query, by the
//     share of the query's words they hold.
//
// An item ranked r (from 1) in a list earns 1/(rrfK + r) from it; its
// Score is its sum over both lists divided by 2/(rrfK + 1), so that an
// item first in both scores 1 and one first in one list only 0.5. Equal
// sums rank by cosine similarity, then newest first. Items in neither
// list are left out.
func (s *DB) rankByMeaning(ctx context.Context, q ItemQuery, items []Item) ([]Item, error) {
	cosine, err := s.similarities(ctx, q, items)
	if err != nil {
		return nil, err
	}
	fused := make([]float64, len(items))
	byMeaning := make([]int, 0, len(cosine))
	for i, c := range cosine {
		if float64(c) >= s.index.MinSimilarity {
			byMeaning = append(byMeaning, i)
		}
	}
	// Equal cosines rank by position: the newest first.
	slices.SortFunc(byMeaning, func(a, b int) int {
		if c := cmp.Compare(cosine[b], cosine[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for r, i := range byMeaning {
		fused[i] += 1 / float64(rrfK+r+1)
	}
	var byWords []int
	for i, it := range items {
		if it.Score > 0 {
			byWords = append(byWords, i)
		}
	}
	slices.SortStableFunc(byWords, func(a, b int) int { return cmp.Compare(items[b].Score, items[a].Score) })
	for r, i := range byWords {
		fused[i] += 1 / float64(rrfK+r+1)
	}
	var ranked []int
	for i := range items {
		if fused[i] > 0 {
			ranked = append(ranked, i)
		}
	}
	slices.SortStableFunc(ranked, func(a, b int) int {
		if c := cmp.Compare(fused[b], fused[a]); c != 0 {
			return c
		}
		return cmp.Compare(cosineOr(cosine, b), cosineOr(cosine, a))
	})
	out := make([]Item, len(ranked))
	for j, i := range ranked {
		out[j] = items[i]
		out[j].Score = fused[i] / (2.0 / (rrfK + 1))
	}
	return out, nil
}

// cosineOr is item i's cosine similarity, or -2 (below any) for an item
// without a vector.
func cosineOr(cosine map[int]float32, i int) float32 {
	if c, ok := cosine[i]; ok {
		return c
	}
	return -2
}

// similarities embeds q's query and returns, by index in items, the
// cosine similarity of each item's closest vector to it; an item without
// a vector of the index's dimensions has none.
func (s *DB) similarities(ctx context.Context, q ItemQuery, items []Item) (map[int]float32, error) {
	vectors, err := s.index.embed(ctx, []string{q.Query})
	if err != nil {
		return nil, err
	}
	query := make([]float32, s.index.Dims)
	for i := range query {
		query[i] = math.Float32frombits(binary.LittleEndian.Uint32(vectors[0][4*i:]))
	}
	position := make(map[string]int, len(items))
	for i, it := range items {
		position[encodeNamespace(it.Namespace)+"\x00"+it.Key] = i
	}
	cosine := make(map[int]float32, len(items))
	size := 4 * s.index.Dims
	// items are the live ones: a vector of an item that expired (and is
	// not swept yet) finds no position.
	err = s.d.VectorsUnder(ctx, encodeNamespace(q.Prefix), func(v dialect.VectorRow) error {
		i, ok := position[v.Namespace+"\x00"+v.Key]
		if !ok || len(v.Vector) != size {
			return nil
		}
		c := dot(query, v.Vector)
		if best, seen := cosine[i]; !seen || c > best {
			cosine[i] = c
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: search items under %v by meaning: %w", q.Prefix, err)
	}
	return cosine, nil
}
