package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// StoreIndex is dawn.yaml's store.index: how the Store embeds items for
// search by meaning, as LangGraph's store index is configured.
type StoreIndex struct {
	// Embed names the embedding model, provider:model
	// ("openai:text-embedding-3-small").
	Embed string
	// Dims is the length of the model's vectors.
	Dims int
	// Fields are the JSON paths of the text to embed; none embeds the
	// whole value.
	Fields []string
	// MinSimilarity is the cosine similarity an item needs to be ranked
	// by meaning; nil leaves the store's default.
	MinSimilarity *float64
}

// storeSection parses store:, a file path or postgres:// URL, or a
// mapping of path and index.
func (p *configParser) storeSection(key, val *yaml.Node, c *Config) {
	if val.Kind != yaml.MappingNode {
		c.Store = p.text(key, val)
		return
	}
	for k, v := range yamldoc.Pairs(val) {
		switch k.Value {
		case "path":
			c.Store = p.text(k, v)
		case "index":
			c.StoreIndex = p.storeIndex(v)
		default:
			p.fail(k.Line, "field store.%s not found; allowed keys in store: path (a file or postgres:// URL), index (embed, dims, fields, min_similarity)", k.Value)
		}
	}
}

func (p *configParser) storeIndex(val *yaml.Node) *StoreIndex {
	const example = "store: {index: {embed: openai:text-embedding-3-small, dims: 1536, fields: [text]}}"
	if yamldoc.IsNull(val) {
		return nil
	}
	if val.Kind != yaml.MappingNode {
		p.fail(val.Line, "store.index must be a mapping, like %s", example)
		return nil
	}
	ix := &StoreIndex{}
	seen := map[string]bool{}
	for k, v := range yamldoc.Pairs(val) {
		seen[k.Value] = true
		switch k.Value {
		case "embed":
			ix.Embed = strings.TrimSpace(p.text(k, v))
		case "dims":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&ix.Dims) != nil || ix.Dims < 1 || ix.Dims > 16000 {
				p.fail(k.Line, "store.index.dims must be the model's vector length, a whole number from 1 to 16000 such as 1536, not %q", v.Value)
			}
		case "fields":
			ix.Fields = p.indexFields(k, v)
		case "min_similarity":
			var f float64
			if v.Kind != yaml.ScalarNode || v.Decode(&f) != nil || f < -1 || f > 1 {
				p.fail(k.Line, "store.index.min_similarity must be a cosine similarity from -1 to 1, such as 0.3, not %q", v.Value)
				continue
			}
			ix.MinSimilarity = &f
		default:
			p.fail(k.Line, "field store.index.%s not found; allowed keys in store.index: embed, dims, fields, min_similarity", k.Value)
		}
	}
	if !seen["embed"] {
		p.fail(val.Line, "store.index.embed is required: the embedding model, like %s", example)
	}
	if !seen["dims"] {
		p.fail(val.Line, "store.index.dims is required: the length of the model's vectors (1536 for openai:text-embedding-3-small)")
	}
	return ix
}

func (p *configParser) indexFields(key, val *yaml.Node) []string {
	if val.Kind != yaml.SequenceNode {
		p.fail(key.Line, "store.index.fields must be a list of JSON paths, like [text, content.summary]")
		return nil
	}
	var out []string
	for _, item := range val.Content {
		if item.Kind != yaml.ScalarNode || strings.TrimSpace(item.Value) == "" {
			p.fail(item.Line, "store.index.fields must be a list of JSON paths, like [text, content.summary]")
			return nil
		}
		out = append(out, strings.TrimSpace(item.Value))
	}
	return out
}

// OpenIndex returns the Store's index for store.index, its embedding
// model configured from env as a route's model is (OPENAI_API_KEY,
// OLLAMA_HOST, ...); nil, nil when dawn.yaml configures none. observe,
// when not nil, is told of every embedding request (for telemetry).
func (a *App) OpenIndex(env func(string) string, observe func(context.Context, models.EmbedCall)) (*store.Index, error) {
	ix := a.Config.StoreIndex
	if ix == nil {
		return nil, nil
	}
	emb, err := models.NewEmbedder(ix.Embed, env, observe)
	if err != nil {
		return nil, fmt.Errorf("store.index.embed in %s: %w", filepath.Join(a.Dir, ConfigFile), err)
	}
	floor := store.DefaultMinSimilarity
	if ix.MinSimilarity != nil {
		floor = *ix.MinSimilarity
	}
	return &store.Index{Embedder: emb, Model: emb.Spec(), Dims: ix.Dims, Fields: ix.Fields, MinSimilarity: floor}, nil
}
