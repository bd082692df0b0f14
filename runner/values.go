package runner

import (
	"encoding/json"
	"os"

	"github.com/dawn-go/dawn/thread"
)

var osGetenv = os.Getenv

// stateValues is a thread's state as the HTTP API shows it: "messages" plus
// every state field.
func stateValues(msgs []thread.Message, values thread.State) json.RawMessage {
	out := make(map[string]json.RawMessage, len(values)+1)
	for k, v := range values {
		out[k] = v
	}
	if msgs == nil {
		msgs = []thread.Message{}
	}
	out["messages"] = mustJSON(msgs)
	return mustJSON(out)
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
