package langgraph

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/thread"
)

// This file keeps the ids LangChain messages carry. A message a client
// sends with its own id keeps it in thread.Message.Meta under metaID, and
// every read and stream shows that id; a message without one is named by
// its position (see messageID).

// metaID is the Meta key of a message's own id.
const metaID = "id"

// ownID returns the id m carries in its Meta, "" for none.
func ownID(m thread.Message) string {
	raw, ok := m.Meta[metaID]
	if !ok {
		return ""
	}
	var id string
	if json.Unmarshal(raw, &id) != nil {
		return ""
	}
	return id
}

// withID returns m carrying id as its own ("" leaves m as it is). Meta is
// copied, never changed in place.
func withID(m thread.Message, id string) thread.Message {
	if id == "" {
		return m
	}
	meta := make(map[string]json.RawMessage, len(m.Meta)+1)
	maps.Copy(meta, m.Meta)
	data, _ := json.Marshal(id)
	meta[metaID] = data
	m.Meta = meta
	return m
}

// idOr is m's own id, or positional when it has none.
func idOr(m thread.Message, positional string) string {
	if id := ownID(m); id != "" {
		return id
	}
	return positional
}

// isNote reports whether m carries metadata a capability set (a note it
// wrote), as opposed to a client's message whose only key is its id.
func isNote(m thread.Message) bool {
	for k := range m.Meta {
		if k != metaID {
			return true
		}
	}
	return false
}

// namedValues is lcValues with the messages named by n, the names of
// their branch.
func namedValues(n messageNames, msgs []thread.Message, fields thread.State) json.RawMessage {
	out := make(map[string]json.RawMessage, len(fields)+1)
	maps.Copy(out, fields)
	out["messages"] = wire.MustJSON(n.messages(msgs))
	return wire.MustJSON(out)
}

// outputNames are the names of a finished run's messages: those of the
// thread's latest state, which the run wrote, so that runs/wait shows the
// ids a read of the thread shows (a copy's or a branch's included).
func (s *dialect) outputNames(ctx context.Context, threadID string) messageNames {
	n := s.threadNames(ctx, threadID)
	n.base = cmp.Or(n.base, threadID)
	return n
}
