package planning

import (
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"gopkg.in/yaml.v3"
)

// dawn.yaml keys planning reads (see capabilities.ConfigSection).
const (
	// ConfigTodos caps the items of one writeTodos call (default MaxTodos).
	ConfigTodos = "limits.todos"
	// ConfigTodoBytes caps the text of one plan item and its evidence
	// (default MaxContentBytes).
	ConfigTodoBytes = "limits.todo_bytes"
)

// ConfigKeys names planning's dawn.yaml keys.
func (marker) ConfigKeys() []string { return []string{ConfigTodos, ConfigTodoBytes} }

// Configure returns the planning marker with the limits dawn.yaml sets.
func (m marker) Configure(values map[string]*yaml.Node) (capabilities.Marker, error) {
	for _, k := range []struct {
		key string
		dst *int
	}{{ConfigTodos, &m.lim.todos}, {ConfigTodoBytes, &m.lim.itemBytes}} {
		key, dst := k.key, k.dst
		n, ok := values[key]
		if !ok {
			continue
		}
		var v int
		if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
			return nil, fmt.Errorf("%s must be a whole number, not %q", key, n.Value)
		}
		if v < 0 {
			return nil, fmt.Errorf("%s is %d; a limit must be positive, or left out for the default", key, v)
		}
		if v > 0 {
			*dst = v
		}
	}
	return m, nil
}
