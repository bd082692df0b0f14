package runner

import (
	"bytes"
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
	encoded := encodeMessages(msgs)
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

// encodeMessages is json.Marshal of msgs, an empty list for nil, without
// its second pass over each message: encoding/json validates and compacts
// what a MarshalJSON method returns, scanning it byte by byte. A message's
// own fields encode compact already, so only its metadata values, written
// as stored, are compacted here; HTML is escaped as encoding/json escapes
// it.
func encodeMessages(msgs []thread.Message) json.RawMessage {
	var out, compact bytes.Buffer
	out.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			out.WriteByte(',')
		}
		raw, err := m.MarshalJSON()
		if err != nil {
			panic(err)
		}
		if len(m.Meta) > 0 {
			compact.Reset()
			if err := json.Compact(&compact, raw); err != nil {
				panic(err)
			}
			raw = compact.Bytes()
		}
		json.HTMLEscape(&out, raw)
	}
	out.WriteByte(']')
	return out.Bytes()
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
