// Command bigapp is a Dawn app binary for the reliability tests of
// tool-output offload: dawn.Main with one Go tool, exportLog, whose output
// is 1 MiB of numbered lines (line i is "line %07d: état nominal\n"), more
// than any route shows a model whole.
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/dawn-go/dawn"
)

// logSize is exportLog's output size in bytes.
const logSize = 1 << 20

func exportLog(context.Context, struct{}) (string, error) {
	var b strings.Builder
	for i := 0; b.Len() < logSize; i++ {
		fmt.Fprintf(&b, "line %07d: état nominal\n", i)
	}
	return b.String()[:logSize], nil
}

func main() {
	dawn.Main(dawn.Tool("exportLog", "Export the audit log.", exportLog))
}
