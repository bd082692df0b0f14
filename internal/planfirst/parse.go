package planfirst

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxInputBytes is the largest planner output Parse reads.
const MaxInputBytes = 256 << 10

// scanBudget bounds the bytes Parse walks while looking for balanced
// brackets, so output full of unclosed brackets cannot make it slow.
const scanBudget = 4 << 20

// Parse finds the plan in a planner model's output and validates it.
//
// It is tolerant of how models wrap JSON: code fences (```json … ```),
// prose before and after, and the steps array given bare ([{…},…]) instead of
// {"steps":[…]}. It decodes the first bracketed span that is a JSON object
// with a "steps" key or a non-empty array of objects; other spans (like
// "[1]" or "{see below}") are skipped. Unknown keys are ignored.
//
// Every error is a *ValidationError whose text can go back to the model.
func Parse(text string) (*Plan, error) {
	if len(text) > MaxInputBytes {
		return nil, problem("the answer is larger than %d KiB; return only the JSON plan", MaxInputBytes>>10)
	}
	raw, err := findPlanJSON(text)
	if err != nil {
		return nil, err
	}
	p, err := decodePlan(raw)
	if err != nil {
		return nil, err
	}
	if err := Validate(p); err != nil {
		return nil, err
	}
	return p, nil
}

func problem(format string, args ...any) *ValidationError {
	return &ValidationError{Problems: []string{fmt.Sprintf(format, args...)}}
}

// findPlanJSON returns the first span of text that decodes as a plan-shaped
// JSON value.
func findPlanJSON(text string) (string, error) {
	budget := scanBudget
	for i := 0; i < len(text) && budget > 0; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		end, scanned := matchingClose(text, i)
		budget -= scanned
		if end < 0 {
			continue
		}
		if span := text[i:end]; planShaped(span) {
			return span, nil
		}
	}
	return "", problem(`no JSON plan found; answer with one JSON object like {"goal":"…","steps":[{"id":"E1","task":"…"}]}`)
}

// matchingClose returns the index just past the bracket that closes the one
// at text[start], skipping brackets inside JSON strings, or -1 when the
// brackets do not balance; and how many bytes it looked at.
func matchingClose(text string, start int) (end, scanned int) {
	stack := make([]byte, 0, 8)
	inString, escaped := false, false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return -1, i + 1 - start
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i + 1, i + 1 - start
			}
		}
	}
	return -1, len(text) - start
}

// planShaped reports whether span is an object with a "steps" key or a
// non-empty array whose elements are all objects.
func planShaped(span string) bool {
	if span[0] == '{' {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(span), &obj) != nil {
			return false
		}
		for k := range obj {
			if strings.EqualFold(k, "steps") {
				return true
			}
		}
		return false
	}
	var arr []json.RawMessage
	if json.Unmarshal([]byte(span), &arr) != nil || len(arr) == 0 {
		return false
	}
	for _, el := range arr {
		if len(el) == 0 || el[0] != '{' {
			return false
		}
	}
	return true
}

// decodePlan decodes a plan-shaped span into a Plan.
func decodePlan(raw string) (*Plan, error) {
	p := &Plan{}
	var err error
	if raw[0] == '[' {
		err = json.Unmarshal([]byte(raw), &p.Steps)
	} else {
		err = json.Unmarshal([]byte(raw), p)
	}
	if err != nil {
		return nil, problem("%s", describeJSONError(err, raw[0] == '['))
	}
	return p, nil
}

// describeJSONError turns a decoding error into a sentence about the field.
func describeJSONError(err error, bare bool) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if bare {
			field = "steps." + field
		}
		if field == "" {
			field = "the plan"
		}
		want := "a string"
		switch te.Type.String() {
		case "[]string":
			want = "a list of step ids"
		case "[]planfirst.Step":
			want = "a list of step objects"
		case "planfirst.Step", "planfirst.Plan":
			want = "an object"
		}
		return fmt.Sprintf("%s is a JSON %s; it must be %s", field, te.Value, want)
	}
	return "the plan is not valid JSON: " + err.Error()
}
