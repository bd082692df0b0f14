package wire_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/server/wire"
)

// TestRegister: wires are mounted in the order they were registered, and
// a second wire of a name, or one without a name or Mount, is refused at
// start-up rather than mounted twice or not at all.
func TestRegister(t *testing.T) {
	mount := func(wire.Host) {}
	wire.Register(wire.Wire{Name: "test-first", Mount: mount}, wire.Wire{Name: "test-second", Mount: mount})
	var names []string
	for _, w := range wire.Registered() {
		names = append(names, w.Name)
	}
	if i := slices.Index(names, "test-first"); i < 0 || i+1 >= len(names) || names[i+1] != "test-second" {
		t.Errorf("Registered names %v; want test-first then test-second", names)
	}
	for _, tc := range []struct {
		w    wire.Wire
		says string
	}{
		{wire.Wire{Name: "test-first", Mount: mount}, "twice for wire test-first"},
		{wire.Wire{Mount: mount}, "without a name"},
		{wire.Wire{Name: "test-nomount"}, "without a name or Mount"},
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, tc.says) {
					t.Errorf("Register(%+v) panicked with %q; want it to say %q", tc.w.Name, r, tc.says)
				}
			}()
			wire.Register(tc.w)
		}()
	}
	if n := len(wire.Registered()); n != len(names) {
		t.Errorf("a refused Register changed the registry: %d wires, want %d", n, len(names))
	}
}
