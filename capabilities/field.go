package capabilities

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
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

// Check reports whether v may be written to the field from outside a run
// (LangGraph's updateState): JSON of the field's type, or null, and for a
// replaced field valid against its schema when it has one. The error
// names the field.
func (f Field) Check(v json.RawMessage) error {
	if f.Type != "" && !jsonHasType(v, f.Type) {
		return fmt.Errorf("%s: expected a value of type %s", f.Name, f.Type)
	}
	if len(f.Schema) == 0 || f.Reducer == Append || string(v) == "null" {
		return nil
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(f.Schema, &schema); err != nil {
		return fmt.Errorf("%s: the field's schema (from %s) is not a JSON Schema: %w", f.Name, f.Source, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("%s: the field's schema (from %s) does not resolve: %w", f.Name, f.Source, err)
	}
	var value any
	if err := json.Unmarshal(v, &value); err != nil {
		return fmt.Errorf("%s: not JSON: %w", f.Name, err)
	}
	if err := resolved.Validate(value); err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	return nil
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
