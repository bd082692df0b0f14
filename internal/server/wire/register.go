package wire

import (
	"fmt"
	"slices"
	"sync"
)

// Wire is a protocol the HTTP core serves beside Dawn's own: its Name,
// and Mount, which mounts its endpoints on a Host and keeps what it reads
// them through. The core names no wire; each is registered (Register),
// as database/sql's drivers are, and the core mounts every registered
// wire, in the order they were registered, when it builds a server.
type Wire struct {
	// Name names the wire, like "agui"; two wires may not share one.
	Name string
	// Mount mounts the wire's endpoints on h. It runs once per server,
	// before Dawn's own endpoints are served.
	Mount func(h Host)
}

var (
	registryMu sync.Mutex
	registry   []Wire
)

// Register adds wires to those every server mounts, after the ones
// registered before. It panics on a wire without a name or Mount, or
// with the name of one already registered: a program's wires are fixed
// when it starts (register them from an init).
func Register(wires ...Wire) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, w := range wires {
		if w.Name == "" || w.Mount == nil {
			panic(fmt.Sprintf("wire: Register of a wire without a name or Mount (%q)", w.Name))
		}
		if slices.ContainsFunc(registry, func(r Wire) bool { return r.Name == w.Name }) {
			panic("wire: Register called twice for wire " + w.Name)
		}
		registry = append(registry, w)
	}
}

// Registered are the registered wires, in the order they were
// registered.
func Registered() []Wire {
	registryMu.Lock()
	defer registryMu.Unlock()
	return slices.Clone(registry)
}
