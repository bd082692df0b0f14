package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// JSONError says what is wrong with JSON that does not fit what an
// endpoint expects, in JSON's words rather than Go's: the field, the type
// it takes and the one it got ("after_seconds must be a number, not a
// string"). whole names the value itself, for a mismatch at its top
// ("the body", "[0]"). Other errors keep the decoder's words.
func JSONError(err error, whole string) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	where := whole
	if te.Field != "" {
		where = te.Field
	}
	return where + " must be " + jsonTypeOf(te.Type) + ", not " + jsonValueName(te.Value)
}

// jsonTypeOf says in JSON's words what a Go type takes.
func jsonTypeOf(t reflect.Type) string {
	if t == nil {
		return "other JSON"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonTypeOf(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number of 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.Map, reflect.Struct:
		return "a JSON object"
	}
	return "other JSON"
}

// jsonValueName names what the decoder found: "array", "number 1.5" and
// so on, as encoding/json reports it.
func jsonValueName(v string) string {
	kind, rest, _ := strings.Cut(v, " ")
	switch kind {
	case "array", "object":
		return "an " + kind
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "number":
		if rest != "" {
			return rest
		}
		return "a number"
	}
	return v
}
