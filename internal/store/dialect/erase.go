package dialect

import "context"

// Erasure names everything one person owns in the database, for Eraser:
// the threads and crons whose owner is Owner (with every row of those
// threads), the store items whose encoded namespace begins with
// ItemPrefix, the app values whose key begins with AppKeyPrefix, and the
// audit entries the person made or that name one of their threads.
type Erasure struct {
	Owner, ItemPrefix, AppKeyPrefix string
}

// Eraser is the write that forgets a person: it deletes what e names
// inside the transaction and counts the deleted rows by table.
type Eraser interface {
	Erase(ctx context.Context, e Erasure) (map[string]int, error)
}

// EraseStep is one statement of an erasure: it deletes the rows of Table
// that belong to the person, with one argument, $1 (Arg picks it).
type EraseStep struct {
	Table, SQL string
	Arg        func(Erasure) string
}

func byOwner(e Erasure) string      { return e.Owner }
func byItemPrefix(e Erasure) string { return e.ItemPrefix }
func byAppPrefix(e Erasure) string  { return e.AppKeyPrefix }

// ownedThread selects the pks of the person's threads.
const ownedThread = `thread IN (SELECT pk FROM threads WHERE owner = $1)`

// EraseSteps are the statements that erase a person, in the order they
// run: the rows that point at a thread first, then the threads. Both
// dialects run them as written (SQLite with ?1 for $1). A table that
// holds a person's rows and is not erased here fails the store's forget
// test, which reads every table of the schema.
var EraseSteps = []EraseStep{
	{"audit", `DELETE FROM audit WHERE user_name = $1 OR thread_id IN (SELECT id FROM threads WHERE owner = $1)`, byOwner},
	{"history", `DELETE FROM history WHERE ` + ownedThread, byOwner},
	{"tool_outputs", `DELETE FROM tool_outputs WHERE ` + ownedThread, byOwner},
	{"webhook_deliveries", `DELETE FROM webhook_deliveries WHERE ` + ownedThread, byOwner},
	{"checkpoints", `DELETE FROM checkpoints WHERE ` + ownedThread, byOwner},
	{"branches", `DELETE FROM branches WHERE ` + ownedThread, byOwner},
	{"runs", `DELETE FROM runs WHERE ` + ownedThread, byOwner},
	{"queued_runs", `DELETE FROM queued_runs WHERE ` + ownedThread, byOwner},
	{"threads", `DELETE FROM threads WHERE owner = $1`, byOwner},
	{"crons", `DELETE FROM crons WHERE owner = $1`, byOwner},
	{"store_item_vectors", `DELETE FROM store_item_vectors WHERE substr(namespace, 1, length($1)) = $1`, byItemPrefix},
	{"store_items", `DELETE FROM store_items WHERE substr(namespace, 1, length($1)) = $1`, byItemPrefix},
	{"app_values", `DELETE FROM app_values WHERE substr(key, 1, length($1)) = $1`, byAppPrefix},
}

// KeepsNoPersonalRows are the tables of the schema that hold no person's
// rows, so an erasure leaves them: the store's bookkeeping (replica
// leases, the schema version), and the app's assistants, which belong to
// no user (configured for the whole app).
var KeepsNoPersonalRows = []string{"owners", "dawn_schema", "assistants", "assistant_versions"}
