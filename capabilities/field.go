package capabilities

import (
	"encoding/json"
	"fmt"
)

// Reducer says how an update to a state field combines with its value.
type Reducer string

// Reducers.
const (
	// Replace sets the field to the update.
	Replace Reducer = "replace"
	// Append concatenates an array update to the field's array.
	Append Reducer = "append"
)

// Field is one state field of a route.
type Field struct {
	Name string `json:"name"`
	// Type is a JSON Schema type: string, number, integer, boolean, array or
	// object.
	Type string `json:"type"`
	// Schema is the field's full JSON Schema when known; otherwise {"type":
	// Type} is implied.
	Schema  json.RawMessage `json:"schema,omitempty"`
	Default json.RawMessage `json:"default,omitempty"`
	Reducer Reducer         `json:"reducer"`
	// Capability names the capability that contributes the field; empty for
	// fields declared in state.yaml. A run's input may set only fields
	// without a capability.
	Capability string `json:"capability,omitempty"`
	// Source is the file that declared the field.
	Source string `json:"source"`
}

// Reduce combines the field's current value with an update.
func (f Field) Reduce(current, update json.RawMessage) (json.RawMessage, error) {
	if f.Reducer != Append {
		return update, nil
	}
	var have, add []json.RawMessage
	if len(current) > 0 && string(current) != "null" {
		if err := json.Unmarshal(current, &have); err != nil {
			return nil, fmt.Errorf("state field %q: current value is not an array: %w", f.Name, err)
		}
	}
	if err := json.Unmarshal(update, &add); err != nil {
		return nil, fmt.Errorf("state field %q uses the append reducer, so an update must be an array: %w", f.Name, err)
	}
	return json.Marshal(append(have, add...))
}
