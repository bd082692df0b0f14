package langgraph

import (
	"encoding/json"

	"github.com/dawn-go/dawn/internal/server/wire"
)

// selectFields keeps only the named members of v's JSON object; none
// named keeps all.
func selectFields(v any, names []string) (any, error) {
	if len(names) == 0 {
		return v, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	kept := map[string]json.RawMessage{}
	for _, n := range names {
		v, ok := all[n]
		if !ok {
			return nil, wire.BadBody("select names " + n + ", which is not a field of the objects listed")
		}
		kept[n] = v
	}
	return kept, nil
}
