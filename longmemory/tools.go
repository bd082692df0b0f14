package longmemory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

type rememberOut struct {
	Key      string `json:"key"`
	Replaced bool   `json:"replaced"`
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

// memory is a memory's value in the store.
type memory struct {
	Text string `json:"text"`
}

func rememberTool(ns []string) capabilities.Tool {
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
			_, replaced, err := st.Get(ctx, ns, key)
			if err != nil {
				return rememberOut{}, err
			}
			value, _ := json.Marshal(memory{Text: text})
			if err := st.Put(ctx, ns, key, value); err != nil {
				return rememberOut{}, err
			}
			return rememberOut{Key: key, Replaced: replaced}, nil
		})
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
				var m memory
				_ = json.Unmarshal(it.Value, &m)
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
