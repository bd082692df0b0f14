package notes_test

import (
	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/examples/notes"
)

// An app registers the notes capability in its main package; every route
// folder with a notes.md then gets it.
func Example() {
	dawn.Main(
		dawn.WithCapability(notes.Marker()),
	)
}
