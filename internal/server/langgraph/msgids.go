package langgraph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
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

// withOwnID returns m carrying id as its own ("" leaves m as it is). Meta is
// copied, never changed in place.
func withOwnID(m thread.Message, id string) thread.Message {
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

// roleRemove is the role of LangChain's RemoveMessage ({"type": "remove",
// "id": ...}), which drops the message it names from the state.
const roleRemove = "remove"

// removeAll is the id of LangGraph's REMOVE_ALL_MESSAGES: a remove
// message with it drops every message before it.
const removeAll = "__remove_all__"

// byID merges an update's messages into cp's as LangGraph's add_messages
// reducer does: a message whose id names one of the messages (cp's, or
// one the update added before it) replaces it in place, a remove message
// drops the one it names (every one, with removeAll), and the others are
// added at the end. It returns how many of cp's first messages stay as
// they are and the messages that follow them; each of cp's messages among
// those carries the id it had, so it keeps its name on the new branch.
func byID(cp store.Checkpoint, in []thread.Message) (keep int, tail []thread.Message, err error) {
	n := len(cp.Messages)
	names := namesOf(cp)
	msgs := slices.Clone(cp.Messages)
	ids := make([]string, n)
	index := make(map[string]int, n)
	for i, m := range msgs {
		ids[i] = idOr(m, names.id(i))
		index[ids[i]] = i
	}
	keep = n
	removed := map[int]bool{}
	for i, m := range in {
		id := ownID(m)
		j, found := index[id]
		found = found && !removed[j]
		switch {
		case m.Role == roleRemove && id == removeAll:
			for k := range msgs {
				removed[k] = true
			}
			j = 0
		case m.Role == roleRemove && !found:
			return 0, nil, wire.BadBody(fmt.Sprintf("messages[%d] removes message %q, which the thread's state does not have", i, id))
		case m.Role == roleRemove:
			removed[j] = true
		case found && sameMessage(msgs[j], m):
			continue // the message as it is: nothing changes
		case found:
			msgs[j] = m
		default:
			if id != "" {
				index[id] = len(msgs)
			}
			msgs = append(msgs, m)
			continue
		}
		keep = min(keep, j)
	}
	for i := keep; i < len(msgs); i++ {
		switch {
		case removed[i]:
		case i < n:
			tail = append(tail, withOwnID(msgs[i], ids[i]))
		default:
			tail = append(tail, msgs[i])
		}
	}
	return keep, tail, nil
}

// carryingID is cp's i-th message carrying the id it has there, so that
// written again elsewhere (on another branch) it keeps its name.
func carryingID(cp store.Checkpoint, i int) thread.Message {
	m := cp.Messages[i]
	return withOwnID(m, idOr(m, namesOf(cp).id(i)))
}

// sameMessage reports whether b, sent with a's id, has a's fields: a
// client that sends back a message as it read it changes nothing.
func sameMessage(a, b thread.Message) bool {
	a.Meta, b.Meta = nil, nil
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
