package runner

import (
	"encoding/json"
	"os"
	"slices"

	"github.com/dawn-go/dawn/thread"
)

var osGetenv = os.Getenv

// stateValues is a thread's state as the HTTP API shows it: "messages" plus
// every state field.
//
// It assembles the object from the already-encoded values instead of
// handing them to encoding/json, which would validate and compact every
// value again (a tenth of a run's CPU in the profile). State values are
// always valid JSON: they come from the store, a reducer or a checked run
// input. Keys are sorted, as encoding/json sorts map keys.
func stateValues(msgs []thread.Message, values thread.State) json.RawMessage {
	if msgs == nil {
		msgs = []thread.Message{}
	}
	encoded := mustJSON(msgs)
	keys := make([]string, 0, len(values)+1)
	size := len(encoded) + 16
	for k, v := range values {
		if k != "messages" {
			keys = append(keys, k)
			size += len(k) + len(v) + 4
		}
	}
	keys = append(keys, "messages")
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(k) // a string always encodes
		b = append(b, key...)
		b = append(b, ':')
		if k == "messages" {
			b = append(b, encoded...)
		} else {
			b = append(b, values[k]...)
		}
	}
	return append(b, '}')
}

// doneData is the data of a done event: {"output": output}.
func doneData(output json.RawMessage) json.RawMessage {
	b := make([]byte, 0, len(output)+12)
	b = append(b, `{"output":`...)
	b = append(b, output...)
	return append(b, '}')
}

// StateValues is stateValues for callers outside the package.
func StateValues(msgs []thread.Message, values thread.State) json.RawMessage {
	return stateValues(msgs, values)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
