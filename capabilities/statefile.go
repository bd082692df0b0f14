package capabilities

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// StateFileName is the optional file beside agent.md that declares extra
// state fields.
const StateFileName = "state.yaml"

// maxStateFile bounds state.yaml; a declaration file has no reason to be big.
const maxStateFile = 256 << 10

var fieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var fieldTypes = []string{"string", "number", "integer", "boolean", "array", "object"}

// reservedFields are state keys the runtime owns.
var reservedFields = []string{"messages", InterruptsKey, SubagentsKey, StrategyKey, NotesKey, StartedKey, DecisionsKey}

type fieldSpec struct {
	Type        string    `yaml:"type"`
	Default     yaml.Node `yaml:"default"`
	Reducer     string    `yaml:"reducer"`
	Description string    `yaml:"description"`
}

// LoadStateFile reads dir/state.yaml. It returns no fields and no error when
// the file does not exist.
//
// The file maps field names to a type, an optional default and an optional
// reducer (arrays default to append, everything else to replace):
//
//	notes:
//	  type: array
//	tier:
//	  type: string
//	  default: free
func LoadStateFile(dir string) ([]Field, error) {
	path := filepath.Join(dir, StateFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ParseStateFile(path, data)
}

// ParseStateFile parses the contents of a state.yaml; path is used in errors.
func ParseStateFile(path string, data []byte) ([]Field, error) {
	if len(data) > maxStateFile {
		return nil, fmt.Errorf("%s: file is %d bytes, over the %d byte limit; declare fewer fields", path, len(data), maxStateFile)
	}
	root, err := yamldoc.Mapping(data)
	var notMapping *yamldoc.NotMappingError
	switch {
	case errors.As(err, &notMapping):
		return nil, fmt.Errorf("%s:%d: expected a mapping of field names to {type, default, reducer}", path, notMapping.Line)
	case err != nil:
		return nil, fmt.Errorf("%s: not valid YAML: %v", path, err)
	}
	var fields []Field
	var errs []error
	for key, val := range yamldoc.Pairs(root) {
		f, err := parseField(path, key, val)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if slices.ContainsFunc(fields, func(g Field) bool { return g.Name == f.Name }) {
			errs = append(errs, fmt.Errorf("%s:%d: field %q is declared twice", path, key.Line, f.Name))
			continue
		}
		fields = append(fields, f)
	}
	return fields, errors.Join(errs...)
}

func parseField(path string, key, val *yaml.Node) (Field, error) {
	name := key.Value
	at := fmt.Sprintf("%s:%d: field %q", path, key.Line, name)
	if !fieldName.MatchString(name) {
		return Field{}, fmt.Errorf("%s: a field name must be a letter or _ followed by letters, digits or _", at)
	}
	if slices.Contains(reservedFields, name) {
		return Field{}, fmt.Errorf("%s: %q is kept by the runtime; choose another name", at, name)
	}
	var spec fieldSpec
	if val.Kind != yaml.MappingNode {
		return Field{}, fmt.Errorf("%s: expected {type, default, reducer}", at)
	}
	if err := decodeStrict(val, &spec); err != nil {
		return Field{}, fmt.Errorf("%s: %v", at, err)
	}
	if !slices.Contains(fieldTypes, spec.Type) {
		return Field{}, fmt.Errorf("%s: type %q must be one of string, number, integer, boolean, array, object", at, spec.Type)
	}
	f := Field{Name: name, Type: spec.Type, Source: path, Reducer: Replace}
	switch spec.Reducer {
	case "":
		if spec.Type == "array" {
			f.Reducer = Append
		}
	case string(Replace):
	case string(Append):
		if spec.Type != "array" {
			return Field{}, fmt.Errorf("%s: reducer append needs type array, not %s", at, spec.Type)
		}
		f.Reducer = Append
	default:
		return Field{}, fmt.Errorf("%s: reducer %q must be replace or append", at, spec.Reducer)
	}
	schema := map[string]any{"type": spec.Type}
	if spec.Description != "" {
		schema["description"] = spec.Description
	}
	f.Schema, _ = json.Marshal(schema)
	if !spec.Default.IsZero() {
		var v any
		if err := spec.Default.Decode(&v); err != nil {
			return Field{}, fmt.Errorf("%s: default: %v", at, err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return Field{}, fmt.Errorf("%s: default cannot be stored as JSON: %v", at, err)
		}
		if !jsonHasType(raw, spec.Type) {
			return Field{}, fmt.Errorf("%s: default %s is not of type %s", at, bytes.TrimSpace(raw), spec.Type)
		}
		f.Default = raw
	}
	return f, nil
}

func decodeStrict(n *yaml.Node, v *fieldSpec) error {
	for key := range yamldoc.Pairs(n) {
		switch k := key.Value; k {
		case "type", "default", "reducer", "description":
		default:
			return fmt.Errorf("unknown key %q; allowed keys are type, default, reducer, description", k)
		}
	}
	return n.Decode(v)
}

// jsonHasType reports whether raw is a JSON value of the JSON Schema type typ.
func jsonHasType(raw json.RawMessage, typ string) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	switch x := v.(type) {
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	case float64:
		return typ == "number" || (typ == "integer" && x == float64(int64(x)))
	case []any:
		return typ == "array"
	case map[string]any:
		return typ == "object"
	case nil:
		return true
	}
	return false
}
